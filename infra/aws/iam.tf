# Least privilege: one role per function, each limited to its prefixes of the one bucket and to its
# own log group. Neither may delete store objects (only `meshsnap gc`, run by an operator, does).

locals {
  store_keys  = "${aws_s3_bucket.store.arn}/${var.store_prefix}/*"
  inputs_keys = "${aws_s3_bucket.store.arn}/${var.inputs_prefix}*"
}

data "aws_iam_policy_document" "lambda_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

# --- the API function: read and write the store ---
resource "aws_iam_role" "api" {
  name               = "${var.name}-api"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
}

data "aws_iam_policy_document" "api" {
  statement {
    sid       = "StoreObjects"
    actions   = ["s3:GetObject", "s3:PutObject"]
    resources = [local.store_keys]
  }
  statement {
    sid       = "ListStore"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.store.arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${var.store_prefix}/*"]
    }
  }
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.api.arn}:*"]
  }
}

resource "aws_iam_role_policy" "api" {
  name   = "${var.name}-api"
  role   = aws_iam_role.api.id
  policy = data.aws_iam_policy_document.api.json
}

# --- the inputs function: read the inputs folders, read and write the store ---
resource "aws_iam_role" "inputs" {
  name               = "${var.name}-s3-inputs"
  assume_role_policy = data.aws_iam_policy_document.lambda_assume.json
}

data "aws_iam_policy_document" "inputs" {
  statement {
    sid       = "ReadInputs"
    actions   = ["s3:GetObject"]
    resources = [local.inputs_keys]
  }
  statement {
    sid       = "StoreObjects"
    actions   = ["s3:GetObject", "s3:PutObject"]
    resources = [local.store_keys]
  }
  statement {
    sid       = "ListInputsAndStore"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.store.arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${var.inputs_prefix}*", "${var.store_prefix}/*"]
    }
  }
  statement {
    sid       = "Logs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.inputs.arn}:*"]
  }
}

resource "aws_iam_role_policy" "inputs" {
  name   = "${var.name}-s3-inputs"
  role   = aws_iam_role.inputs.id
  policy = data.aws_iam_policy_document.inputs.json
}
