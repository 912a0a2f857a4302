//! The route primitives' `errorCode`s (spec §4.4): only the primitives'
//! endpoints answer with them; the host's catalogue (`GET /api/errors`)
//! lists them through the feature's descriptor ([`crate::http::feature`]).
//! Their refusals ([`crate::Invalid`], [`crate::service::ServiceError`])
//! become API errors here, so every adapter and the live runner answer
//! them alike.

use relay_errors::{ApiError, ErrorCode};

use crate::{service::ServiceError, Invalid};

relay_errors::error_codes! { pub ALL;
    /// No batch, schedule or conditional has that id (spec §7: 404 for a bad schedule path or id).
    PrimitiveNotFound => ("PRIMITIVE_NOT_FOUND", NOT_FOUND, false, "no batch_, sched_ or cond_ record has that id on this path", Input),
    /// The schedule or conditional has finished and can no longer be cancelled.
    PrimitiveFinished => ("PRIMITIVE_FINISHED", CONFLICT, false, "the schedule completed, or the conditional triggered, executed, failed or expired: there is nothing left to cancel; or the batch has already been run (a batch runs once)", State),
    /// A DELETE of a schedule or conditional came with neither its cancel token nor the owner's credential.
    PrimitiveCancelUnauthorized => ("PRIMITIVE_CANCEL_UNAUTHORIZED", UNAUTHORIZED, false, "cancelling a schedule or conditional needs its cancel token (x-cancel-token: the cancelToken its create answer carried) or the owner's credential (Authorization: Bearer <owner token>); the record is unchanged", Input),
    /// A DELETE of a schedule or conditional came with a token that is not the record's.
    PrimitiveCancelForbidden => ("PRIMITIVE_CANCEL_FORBIDDEN", FORBIDDEN, false, "the x-cancel-token sent is not this record's: send the cancelToken its own create answer carried (or the owner's credential); the record is unchanged", Input),
    /// A live primitive names an authority this host does not serve yet.
    AuthorityUnsupported => ("AUTHORITY_UNSUPPORTED", BAD_REQUEST, false, "a live primitive runs on the operator's owner credential (authority \"owner\": Authorization: Bearer <owner token> at creation, runs execute as mode self); session and Permit2 authority are not served yet", Input),
}

impl From<Invalid> for ApiError {
    fn from(e: Invalid) -> Self {
        let code = match e.missing {
            true => ErrorCode::MissingField,
            false => ErrorCode::InvalidField,
        };
        ApiError::new(code, e.to_string()).field(e.field)
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> Self {
        let message = e.to_string();
        match e {
            ServiceError::NotFound { .. } => {
                ApiError::new(PrimitiveNotFound, message).field("id")
            }
            ServiceError::Finished { .. } | ServiceError::AlreadyRun { .. } => {
                ApiError::new(PrimitiveFinished, message).field("id")
            }
            ServiceError::CancelUnauthenticated { .. } => {
                ApiError::new(PrimitiveCancelUnauthorized, message)
                    .field(crate::cancel::TOKEN_HEADER)
                    .suggest("send the cancelToken the create answer carried as x-cancel-token, or the owner's Authorization: Bearer <owner token>")
            }
            ServiceError::CancelForbidden { .. } => {
                ApiError::new(PrimitiveCancelForbidden, message)
                    .field(crate::cancel::TOKEN_HEADER)
            }
            ServiceError::Store(e) => ApiError::new(ErrorCode::StoreUnavailable, e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cancel_without_the_records_token_is_the_callers_mistake() {
        for c in [
            super::PrimitiveCancelUnauthorized,
            super::PrimitiveCancelForbidden,
        ] {
            assert_eq!(c.blame(), relay_errors::Blame::Input, "{c:?}");
        }
    }
}
