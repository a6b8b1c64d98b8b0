# The two functions, from the bundles of `node scripts/bundle-lambda.mjs` (one ESM file each).

data "archive_file" "api" {
  type        = "zip"
  source_dir  = "${var.lambda_dir}/api"
  output_path = "${path.module}/.build/api.zip"
}

data "archive_file" "inputs" {
  type        = "zip"
  source_dir  = "${var.lambda_dir}/s3-inputs"
  output_path = "${path.module}/.build/s3-inputs.zip"
}

locals {
  store_url = "s3://${aws_s3_bucket.store.bucket}/${var.store_prefix}"
}

resource "aws_cloudwatch_log_group" "api" {
  name              = "/aws/lambda/${var.name}-api"
  retention_in_days = var.log_retention_days
}

resource "aws_cloudwatch_log_group" "inputs" {
  name              = "/aws/lambda/${var.name}-s3-inputs"
  retention_in_days = var.log_retention_days
}

resource "aws_lambda_function" "api" {
  function_name    = "${var.name}-api"
  role             = aws_iam_role.api.arn
  runtime          = "nodejs20.x"
  architectures    = ["arm64"]
  handler          = "index.handler"
  filename         = data.archive_file.api.output_path
  source_code_hash = data.archive_file.api.output_base64sha256
  memory_size      = 1024 # CPU scales with memory: compiles are CPU-bound
  timeout          = 30   # API Gateway HTTP APIs give up after 30 s

  environment {
    variables = merge(
      {
        MESHSNAP_STORE       = local.store_url
        MESHSNAP_CHANNEL     = var.default_channel
        MESHSNAP_WRITE_TOKEN = var.write_token
        NODE_OPTIONS         = "--enable-source-maps"
      },
      var.read_token != "" ? { MESHSNAP_READ_TOKEN = var.read_token } : {},
    )
  }

  depends_on = [aws_cloudwatch_log_group.api, aws_iam_role_policy.api]
}

resource "aws_lambda_function" "inputs" {
  function_name    = "${var.name}-s3-inputs"
  role             = aws_iam_role.inputs.arn
  runtime          = "nodejs20.x"
  architectures    = ["arm64"]
  handler          = "index.handler"
  filename         = data.archive_file.inputs.output_path
  source_code_hash = data.archive_file.inputs.output_base64sha256
  memory_size      = 1024
  timeout          = 120
  # One run at a time: each run compiles the folder as it is when it runs, so serial runs always
  # end on the newest uploads; parallel runs could finish out of order (functions/aws/s3-inputs.ts).
  reserved_concurrent_executions = 1

  environment {
    variables = {
      MESHSNAP_STORE         = local.store_url
      MESHSNAP_INPUTS_PREFIX = var.inputs_prefix
      MESHSNAP_STRICT        = tostring(var.strict_inputs)
      NODE_OPTIONS           = "--enable-source-maps"
    }
  }

  depends_on = [aws_cloudwatch_log_group.inputs, aws_iam_role_policy.inputs]
}
