//! The ACP connection on stdio, run by the official SDK. Its handlers are `Send` and run in
//! the SDK's dispatch loop, which must not wait on a turn: each one hands its message (with
//! the responder that answers it) to [`Server`], which runs on this thread beside it.
//! Malformed JSON and unknown methods are answered by the SDK with JSON-RPC errors, and the
//! connection goes on. stdin is read under the cap on one message: a longer line (a huge
//! prompt) is dropped as it comes, and its request answered with an error ([`super::oversize`]),
//! instead of growing memory with it or ending the connection and every session.

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CloseSessionRequest, InitializeRequest,
    LoadSessionRequest, NewSessionRequest, PromptRequest, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, ByteStreams, Client};
use agent_loop::process::capped::{self, Breach, CappedLines};
use agent_loop::process::oversize::OversizeLines;
use tokio::sync::{mpsc, oneshot};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use agent_loop::Error;

use crate::cli::signals::{Signals, Stop};

use super::oversize::{self, Dropped};
use super::server::{Incoming, Server};
use super::shared::Shared;

/// Registers a handler that forwards requests of one type as `Incoming::$variant`.
macro_rules! forward {
    ($builder:expr, $tx:expr, $variant:ident, $request:ty) => {{
        let tx = $tx.clone();
        $builder.on_receive_request(
            async move |request: $request, responder, _cx| {
                // The server is gone only when the connection is ending.
                let _ = tx.send(Incoming::$variant(request, responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
    }};
}

/// Serves ACP on stdio until the client closes it or a signal comes (which it returns), then
/// ends every session.
pub async fn serve(shared: Shared) -> Result<Option<Stop>, Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (cx_tx, cx_rx) = oneshot::channel::<ConnectionTo<Client>>();
    let cancel_tx = tx.clone();
    let builder = Agent.v1().name("agent-loop");
    let builder = forward!(builder, tx, Initialize, InitializeRequest);
    let builder = {
        let tx = tx.clone();
        builder.on_receive_request(
            async move |_: AuthenticateRequest, responder, _cx| {
                let _ = tx.send(Incoming::Authenticate(responder));
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
    };
    let builder = forward!(builder, tx, NewSession, NewSessionRequest);
    let builder = forward!(builder, tx, LoadSession, LoadSessionRequest);
    let builder = forward!(builder, tx, Prompt, PromptRequest);
    let builder = forward!(builder, tx, SetMode, SetSessionModeRequest);
    let builder = forward!(builder, tx, SetConfig, SetSessionConfigOptionRequest);
    let builder = forward!(builder, tx, Close, CloseSessionRequest);
    drop(tx);
    // Answered here, in the dispatch loop: it waits on nothing.
    let builder = builder.on_receive_request(
        async move |dropped: Dropped, responder, _cx| {
            let _ = responder.respond_with_error(oversize::refusal(&dropped, capped::LINE));
            Ok(())
        },
        agent_client_protocol::on_receive_request!(),
    );
    let builder = builder.on_receive_notification(
        async move |cancel: CancelNotification, _cx| {
            let _ = cancel_tx.send(Incoming::Cancel(cancel));
            Ok(())
        },
        agent_client_protocol::on_receive_notification!(),
    );
    // At the end of input the server answers what came before it, ends the sessions, and
    // only then lets the connection go (with its last answers written). A signal (an editor
    // stopping its agent with SIGTERM) ends it the same way, each running turn cancelled and
    // saved, and the run ends as a signal ends the CLI's.
    let (closed_tx, closed_rx) = oneshot::channel::<()>();
    let (done_tx, done_rx) = oneshot::channel::<()>();
    let (stop_tx, stop_rx) = oneshot::channel::<Stop>();
    let stopped = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut signals = Signals::install();
    tokio::task::spawn_local(async move {
        let _ = stop_tx.send(signals.next().await);
    });
    let breach = Breach::default();
    // Within the cap every line is, the capped reader mends what is not UTF-8.
    let stdin = OversizeLines::new(
        tokio::io::stdin(),
        capped::LINE,
        oversize::replace(capped::LINE),
    );
    let stdin = CappedLines::new(stdin, capped::LINE, breach.clone());
    let transport = ByteStreams::new(tokio::io::stdout().compat_write(), stdin.compat());
    let seen = stopped.clone();
    let connection = builder.connect_with(transport, async move |cx: ConnectionTo<Client>| {
        let _ = cx_tx.send(cx.clone());
        tokio::select! {
            () = cx.incoming_closed() => {}
            Ok(stop) = stop_rx => *seen.lock().unwrap_or_else(|e| e.into_inner()) = Some(stop),
        }
        let _ = closed_tx.send(());
        let _ = done_rx.await;
        Ok(())
    });
    let server = async move {
        if let Ok(cx) = cx_rx.await {
            Server::new(shared, cx).run(rx, closed_rx).await;
        }
        drop(done_tx);
    };
    let (result, ()) = tokio::join!(connection, server);
    if let Some(why) = breach.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(Error::new(
            agent_loop::ErrorKind::Io,
            format!("ACP connection on stdio: {why}"),
        ));
    }
    result.map_err(|e| {
        Error::new(
            agent_loop::ErrorKind::Io,
            format!("ACP connection on stdio: {e}"),
        )
    })?;
    let stop = *stopped.lock().unwrap_or_else(|e| e.into_inner());
    Ok(stop)
}
