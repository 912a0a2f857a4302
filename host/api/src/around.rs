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
//! an observer that sometimes has to await (re-reading an error body to
//! rewrite or sign it) returns the rest as a boxed future from
//! [`Around::finish`], so only that rare answer pays for the box. Only the
//! body gate, which must read the body before the handler runs, stays a
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

    /// When looking at the request has to await (a rate-limit count in a
    /// shared store): its future, in place of [`Around::before`]. The
    /// default never awaits; a request that takes this path pays for a
    /// clone of the stack beneath and a box.
    fn before_later(&self, _req: &Request) -> Option<SeenLater<Self::Seen>> {
        None
    }

    /// Looks at, or amends, the handler's response.
    fn after(&self, _seen: Self::Seen, _resp: &mut Response) {}

    /// [`Around::after`]; or, when amending the response has to await, the
    /// future of the final response (it takes `resp` with
    /// [`std::mem::take`]). The default never awaits.
    fn finish(&self, seen: Self::Seen, resp: &mut Response) -> Option<Later> {
        self.after(seen, resp);
        None
    }
}

/// The rest of an [`Around::finish`] that has to await: the final response.
pub type Later = Pin<Box<dyn Future<Output = Response> + Send>>;

/// The answer of a request whose [`Around::before_later`] awaited.
pub type Answered = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// An [`Around::before_later`]: what `before` would have answered.
pub type SeenLater<T> = Pin<Box<dyn Future<Output = Result<T, Box<Response>>> + Send>>;

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
    S: Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::Either<AroundFuture<A, S::Future>, Answered>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use futures::future::Either;
        if let Some(seen) = self.around.before_later(&req) {
            // the ready service goes with the request; a clone stays
            let clone = self.inner.clone();
            let ready = std::mem::replace(&mut self.inner, clone);
            let around = self.around.clone();
            return Either::Right(Box::pin(async move {
                Ok(answer_later(around, ready, req, seen).await)
            }));
        }
        Either::Left(match self.around.before(&req) {
            Ok(seen) => AroundFuture {
                inner: Some(self.inner.call(req)),
                answered: None,
                after: Some((self.around.clone(), seen)),
                later: None,
            },
            Err(resp) => AroundFuture {
                inner: None,
                answered: Some(*resp),
                after: None,
                later: None,
            },
        })
    }
}

/// The request through `inner` once `seen` let it pass.
async fn answer_later<A, S>(
    around: A,
    mut inner: S,
    req: Request,
    seen: SeenLater<A::Seen>,
) -> Response
where
    A: Around,
    S: Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    let seen = match seen.await {
        Ok(seen) => seen,
        Err(resp) => return *resp,
    };
    let Ok(resp) = inner.call(req).await;
    let mut resp = resp.into_response();
    match around.finish(seen, &mut resp) {
        None => resp,
        Some(later) => later.await,
    }
}

pin_project_lite::pin_project! {
    /// The handler's future, then [`Around::finish`] (and what it left to
    /// await); or the answer [`Around::before`] gave instead.
    pub struct AroundFuture<A: Around, F> {
        #[pin]
        inner: Option<F>,
        answered: Option<Response>,
        after: Option<(A, A::Seen)>,
        later: Option<Later>,
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
        let mut this = self.project();
        if let Some(resp) = this.answered.take() {
            return Poll::Ready(Ok(resp));
        }
        if let Some(later) = this.later.as_mut() {
            return later.as_mut().poll(cx).map(Ok);
        }
        let Some(inner) = this.inner.as_mut().as_pin_mut() else {
            panic!("AroundFuture polled after it finished");
        };
        let Ok(resp) = std::task::ready!(inner.poll(cx));
        this.inner.set(None);
        // The edge's bodies are already axum's: no new allocation.
        let mut resp = resp.into_response();
        let Some((around, seen)) = this.after.take() else {
            return Poll::Ready(Ok(resp));
        };
        match around.finish(seen, &mut resp) {
            None => Poll::Ready(Ok(resp)),
            Some(later) => this.later.insert(later).as_mut().poll(cx).map(Ok),
        }
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

    /// Upper-cases an answer's body, which means reading it: the rest
    /// awaits.
    #[derive(Clone)]
    struct Shout;

    impl Around for Shout {
        type Seen = ();

        fn before(&self, _: &Request) -> Result<(), Box<Response>> {
            Ok(())
        }

        fn finish(&self, (): (), resp: &mut Response) -> Option<Later> {
            if resp.status() != StatusCode::NOT_FOUND {
                return None;
            }
            let resp = std::mem::take(resp);
            Some(Box::pin(async move {
                let (parts, body) = resp.into_parts();
                let text = axum::body::to_bytes(body, 64).await.unwrap();
                let loud = String::from_utf8_lossy(&text).to_uppercase();
                Response::from_parts(parts, Body::from(loud))
            }))
        }
    }

    #[tokio::test]
    async fn what_finish_leaves_to_await_is_the_answer_and_the_rest_pass_untouched() {
        let app = Router::new()
            .route("/fine", get(|| async { "fine" }))
            .route("/gone", get(|| async { (StatusCode::NOT_FOUND, "gone") }))
            .layer(AroundLayer(Shout));
        let body = |path: &'static str| {
            let app = app.clone();
            async move {
                let resp = app
                    .oneshot(Request::get(path).body(Body::empty()).unwrap())
                    .await
                    .unwrap();
                let status = resp.status();
                let bytes = axum::body::to_bytes(resp.into_body(), 64).await.unwrap();
                (status, String::from_utf8_lossy(&bytes).into_owned())
            }
        };
        assert_eq!(body("/gone").await, (StatusCode::NOT_FOUND, "GONE".into()));
        assert_eq!(body("/fine").await, (StatusCode::OK, "fine".into()));
    }
}
