variable "region" {
  description = "AWS region for the bucket, the functions and the HTTP API."
  type        = string
  default     = "eu-west-1"
}

variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "meshsnap"
}

variable "bucket_name" {
  description = "The S3 bucket (globally unique) holding the store and the inputs folders."
  type        = string
}

variable "store_prefix" {
  description = "Key prefix of the snapshot store inside the bucket (MESHSNAP_STORE=s3://<bucket>/<store_prefix>). Must not be under inputs_prefix."
  type        = string
  default     = "store"
}

variable "inputs_prefix" {
  description = "Key prefix watched for uploads: <inputs_prefix><channel>/<file>.yaml|json."
  type        = string
  default     = "inputs/"
}

variable "write_token" {
  description = "Bearer token for API writes (MESHSNAP_WRITE_TOKEN). Ends up in the Terraform state: keep the state encrypted."
  type        = string
  sensitive   = true
}

variable "read_token" {
  description = "Optional bearer token for reads; when set, reads are closed to everyone else."
  type        = string
  sensitive   = true
  default     = ""
}

variable "default_channel" {
  type    = string
  default = "main"
}

variable "strict_inputs" {
  description = "true: the inputs function publishes nothing when any error diagnostic exists."
  type        = bool
  default     = false
}

variable "lambda_dir" {
  description = "Output of `node scripts/bundle-lambda.mjs` (one folder per function)."
  type        = string
  default     = "../../dist-lambda"
}

variable "log_retention_days" {
  type    = number
  default = 30
}
