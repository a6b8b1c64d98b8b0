output "api_url" {
  description = "The API and the audit page (/), e.g. GET <api_url>/api/v1/channels."
  value       = aws_apigatewayv2_api.http.api_endpoint
}

output "compile_url" {
  description = "For `meshsnap watch --compile-url`."
  value       = "${aws_apigatewayv2_api.http.api_endpoint}/compile"
}

output "store" {
  description = "MESHSNAP_STORE for the CLI, the watcher and the relay."
  value       = local.store_url
}

output "inputs_uri" {
  description = "Upload inputs to <inputs_uri><channel>/<file>."
  value       = "s3://${aws_s3_bucket.store.bucket}/${var.inputs_prefix}"
}
