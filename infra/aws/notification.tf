# Uploads (and deletions) under inputs_prefix invoke the inputs function. Removals too, because a
# channel's inputs are its whole folder: deleting a file changes them. The store's own writes
# (store_prefix) do not match the filter, so a publish never re-triggers the function.
resource "aws_lambda_permission" "s3" {
  statement_id   = "AllowBucketNotifications"
  action         = "lambda:InvokeFunction"
  function_name  = aws_lambda_function.inputs.function_name
  principal      = "s3.amazonaws.com"
  source_arn     = aws_s3_bucket.store.arn
  source_account = data.aws_caller_identity.current.account_id
}

resource "aws_s3_bucket_notification" "inputs" {
  bucket = aws_s3_bucket.store.id
  lambda_function {
    id                  = "meshsnap-inputs"
    lambda_function_arn = aws_lambda_function.inputs.arn
    events              = ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"]
    filter_prefix       = var.inputs_prefix
  }
  depends_on = [aws_lambda_permission.s3]
}
