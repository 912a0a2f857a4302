//! Middleware that looks at a request before its handler and at the
//! response after it ([`Around`]), as a tower layer that calls the service
//! beneath it in place and wraps its future.
//!
//! Why not `axum::middleware::from_fn`: a `from_fn` middleware clones the
//! whole stack beneath it on every request (its future must own the next
//! service), so each one stacked above another costs a deep copy of every
//! layer under it — with the edge's observers that was a tenth of a warm
//! quote's CPU. The edge's synchronous checks and observers (URI cap, rate
//! limits, metrics, usage, the dashboard's recent errors) are [`Around`]s;
//! only what must await (reading the body, signing a refusal) stays a
//! `from_fn`.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use axum::{
    extract::Request,
    response::{IntoResponse, Response},
};
use tower::{Layer, Service};

/// What one middleware does around a request.
pub trait Around: Clone + Send + Sync + 'static {
    /// What [`Around::before`] keeps for [`Around::after`].
    type Seen: Send + 'static;

    /// Looks at the request; `Err` answers it without calling the handler
    /// (boxed: the answer is the rare path, the request the common one).
    fn before(&self, req: &Request) -> Result<Self::Seen, Box<Response>>;

    /// Looks at, or amends, the handler's response.
    fn after(&self, seen: Self::Seen, resp: &mut Response);
}

/// The layer of an [`Around`].
#[derive(Clone)]
pub struct AroundLayer<A>(pub A);

impl<A: Clone, S> Layer<S> for AroundLayer<A> {
    type Service = AroundService<A, S>;

    fn layer(&self, inner: S) -> Self::Service {
        AroundService {
            around: self.0.clone(),
            inner,
        }
    }
}

/// An [`Around`] over the service `S`.
#[derive(Clone)]
pub struct AroundService<A, S> {
    around: A,
    inner: S,
}

impl<A, S> Service<Request> for AroundService<A, S>
where
    A: Around,
    S: Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    type Response = Response;
    type Error = Infallible;
    type Future = AroundFuture<A, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        match self.around.before(&req) {
            Ok(seen) => AroundFuture {
                inner: Some(self.inner.call(req)),
                answered: None,
                after: Some((self.around.clone(), seen)),
            },
            Err(resp) => AroundFuture {
                inner: None,
                answered: Some(*resp),
                after: None,
            },
        }
    }
}

pin_project_lite::pin_project! {
    /// The handler's future, then [`Around::after`]; or the answer
    /// [`Around::before`] gave instead.
    pub struct AroundFuture<A: Around, F> {
        #[pin]
        inner: Option<F>,
        answered: Option<Response>,
        after: Option<(A, A::Seen)>,
    }
}

impl<A, F, R> Future for AroundFuture<A, F>
where
    A: Around,
    F: Future<Output = Result<R, Infallible>>,
    R: IntoResponse,
{
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Some(resp) = this.answered.take() {
            return Poll::Ready(Ok(resp));
        }
        let Some(inner) = this.inner.as_pin_mut() else {
            panic!("AroundFuture polled after it finished");
        };
        let Ok(resp) = std::task::ready!(inner.poll(cx));
        // The edge's bodies are already axum's: no new allocation.
        let mut resp = resp.into_response();
        if let Some((around, seen)) = this.after.take() {
            around.after(seen, &mut resp);
        }
        Poll::Ready(Ok(resp))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    };

    use axum::{body::Body, http::StatusCode, routing::get, Router};
    use tower::ServiceExt;

    use super::*;

    /// Refuses `/no`, counts what it let through, stamps its answers.
    #[derive(Clone, Default)]
    struct Gate(Arc<AtomicUsize>);

    impl Around for Gate {
        type Seen = String;

        fn before(&self, req: &Request) -> Result<String, Box<Response>> {
            match req.uri().path() {
                "/no" => Err(Box::new(
                    Response::builder()
                        .status(StatusCode::FORBIDDEN)
                        .body(Body::empty())
                        .unwrap(),
                )),
                path => Ok(path.to_string()),
            }
        }

        fn after(&self, seen: String, resp: &mut Response) {
            self.0.fetch_add(1, Ordering::SeqCst);
            resp.headers_mut()
                .insert("x-seen", seen.parse().expect("a header value"));
        }
    }

    #[tokio::test]
    async fn before_may_answer_and_after_amends_what_the_handler_answered() {
        let gate = Gate::default();
        let app = Router::new()
            .route("/yes", get(|| async { "hello" }))
            .route("/no", get(|| async { "never" }))
            .layer(AroundLayer(gate.clone()));
        let get = |path: &str| Request::get(path).body(Body::empty()).unwrap();

        let yes = app.clone().oneshot(get("/yes")).await.unwrap();
        assert_eq!(yes.status(), StatusCode::OK);
        assert_eq!(yes.headers()["x-seen"], "/yes");
        let body = axum::body::to_bytes(yes.into_body(), 64).await.unwrap();
        assert_eq!(&body[..], b"hello");

        let no = app.oneshot(get("/no")).await.unwrap();
        assert_eq!(no.status(), StatusCode::FORBIDDEN);
        assert!(no.headers().get("x-seen").is_none());
        assert_eq!(gate.0.load(Ordering::SeqCst), 1, "after ran for /yes only");
    }
}
