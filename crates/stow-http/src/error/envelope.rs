//! The error bodies as they go on the wire, one type per host. These types are serialized for
//! every error answer and are the schemas both OpenAPI documents show, so the two cannot drift.

use serde::Serialize;
use serde_json::Value;
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

use super::Code;
use crate::request::Flavor;

/// Error body of the API host (`cdn-api`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiErrorBody {
    /// Always false.
    pub success: bool,
    pub error: ApiErrorDetail,
    /// The same id as the `X-Request-Id` header.
    pub request_id: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiErrorDetail {
    #[schema(schema_with = cdn_codes)]
    pub code: &'static str,
    pub message: String,
    /// Extra structure for some errors (docs/api.md, "Errors").
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub details: Option<Value>,
}

/// Error body of the ingestion host (`logs-api`).
#[derive(Debug, Serialize, ToSchema)]
pub struct IngestErrorBody {
    #[schema(schema_with = ingest_codes)]
    pub error: &'static str,
    pub message: String,
    /// The same id as the `X-Request-Id` header.
    pub request_id: String,
    /// For `invalid_request` on a batch: every offending event and field.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<logs_core::Detail>>)]
    pub details: Option<Value>,
}

/// Either host's body.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ErrorBody {
    Cdn(ApiErrorBody),
    Ingest(IngestErrorBody),
}

impl ErrorBody {
    pub fn new(
        flavor: Flavor,
        code: Code,
        message: String,
        details: Option<Value>,
        request_id: String,
    ) -> Self {
        match flavor {
            Flavor::Api => ErrorBody::Cdn(ApiErrorBody {
                success: false,
                error: ApiErrorDetail {
                    code: code.cdn_name(),
                    message,
                    details,
                },
                request_id,
            }),
            Flavor::Ingest => ErrorBody::Ingest(IngestErrorBody {
                error: code.ingest_name(),
                message,
                request_id,
                details,
            }),
        }
    }
}

fn codes(flavor: Flavor) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .enum_values(Some(Code::names(flavor)))
        .description(Some(
            "The error code; docs/api.md, \"Errors\", says what each means.",
        ))
        .into()
}

fn cdn_codes() -> RefOr<Schema> {
    codes(Flavor::Api)
}

fn ingest_codes() -> RefOr<Schema> {
    codes(Flavor::Ingest)
}
