# One bucket: the snapshot store under store_prefix, uploaded inputs under inputs_prefix.
resource "aws_s3_bucket" "store" {
  bucket = var.bucket_name
}

# Versioning off: every store object is immutable and content-addressed except the channel heads,
# which are replaced by compare-and-swap (If-Match) — the version history is meshsnap's own.
resource "aws_s3_bucket_versioning" "store" {
  bucket = aws_s3_bucket.store.id
  versioning_configuration {
    status = "Disabled"
  }
}

# No lifecycle rules, on purpose: an expiry rule would delete objects that stored versions still
# reference (rollback needs them). Old versions are removed with `meshsnap gc`, which knows what is live.

resource "aws_s3_bucket_public_access_block" "store" {
  bucket                  = aws_s3_bucket.store.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "store" {
  bucket = aws_s3_bucket.store.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "store" {
  bucket = aws_s3_bucket.store.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}
