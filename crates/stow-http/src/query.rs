//! [`Query`]: the query-string extractor every route uses. It is actix's `web::Query` with the
//! field named in a refusal: `?limit=ten` answers 400 "`limit`: invalid digit found in string"
//! (actix's answer named no field).

use std::future::{ready, Ready};
use std::ops::Deref;

use actix_web::{dev::Payload, FromRequest, HttpRequest};
use serde::de::DeserializeOwned;

use crate::ApiError;

/// The query string as `T` (serde, `application/x-www-form-urlencoded`).
#[derive(Debug)]
pub struct Query<T>(pub T);

impl<T> Query<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> Deref for Query<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Parses `query` as `T`, naming the field a refusal is about.
pub fn parse<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        match field.as_str() {
            "" | "." => ApiError::invalid_request(format!("invalid query string: {inner}")),
            _ => ApiError::invalid_request(format!("`{field}`: {inner}")),
        }
    })
}

impl<T: DeserializeOwned> FromRequest for Query<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(parse(req.query_string()).map(Query))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Params {
        limit: Option<usize>,
        rule_id: Option<String>,
    }

    fn message(e: ApiError) -> String {
        e.message
    }

    #[test]
    fn a_bad_value_names_its_field() {
        let e = parse::<Params>("limit=ten").unwrap_err();
        assert!(message(e).contains("`limit`: invalid digit"), "named");
        let e = parse::<Params>("ruleId=a&limit=-1").unwrap_err();
        assert!(message(e).starts_with("`limit`: "));
    }

    #[test]
    fn good_values_and_unknown_fields() {
        assert_eq!(
            parse::<Params>("limit=5&ruleId=alr_1").unwrap(),
            Params {
                limit: Some(5),
                rule_id: Some("alr_1".into())
            }
        );
        assert_eq!(
            parse::<Params>("").unwrap(),
            Params {
                limit: None,
                rule_id: None
            }
        );
        let e = parse::<Params>("nope=1").unwrap_err();
        assert!(message(e).contains("unknown field `nope`"));
    }
}
