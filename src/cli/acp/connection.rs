//! The ACP connection on stdio, run by the official SDK. Its handlers are `Send` and run in
//! the SDK's dispatch loop, which must not wait on a turn: each one hands its message (with
//! the responder that answers it) to [`Server`], which runs on this thread beside it.
//! Malformed JSON and unknown methods are answered by the SDK with JSON-RPC errors, and the
//! connection goes on.

use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, InitializeRequest, LoadSessionRequest,
    NewSessionRequest, PromptRequest, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, JsonRpcRequest, Stdio};
use tokio::sync::{mpsc, oneshot};

use agent_loop::Error;

use super::server::{Server, Shared};

/// A message from the client, with what answers it.
// Each passes once through a channel; boxing the larger requests buys nothing.
#[allow(clippy::large_enum_variant)]
pub enum Incoming {
    Initialize(
        InitializeRequest,
        Responder<<InitializeRequest as JsonRpcRequest>::Response>,
    ),
    Authenticate(Responder<<AuthenticateRequest as JsonRpcRequest>::Response>),
    NewSession(
        NewSessionRequest,
        Responder<<NewSessionRequest as JsonRpcRequest>::Response>,
    ),
    LoadSession(
        LoadSessionRequest,
        Responder<<LoadSessionRequest as JsonRpcRequest>::Response>,
    ),
    Prompt(
        PromptRequest,
        Responder<<PromptRequest as JsonRpcRequest>::Response>,
    ),
    SetMode(
        SetSessionModeRequest,
        Responder<<SetSessionModeRequest as JsonRpcRequest>::Response>,
    ),
    SetConfig(
        SetSessionConfigOptionRequest,
        Responder<<SetSessionConfigOptionRequest as JsonRpcRequest>::Response>,
    ),
    Cancel(CancelNotification),
}

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

/// Serves ACP on stdio until the client closes it, then ends every session.
pub async fn serve(shared: Shared) -> Result<(), Error> {
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
    drop(tx);
    let builder = builder.on_receive_notification(
        async move |cancel: CancelNotification, _cx| {
            let _ = cancel_tx.send(Incoming::Cancel(cancel));
            Ok(())
        },
        agent_client_protocol::on_receive_notification!(),
    );
    let connection = builder.connect_with(Stdio::new(), async move |cx: ConnectionTo<Client>| {
        let _ = cx_tx.send(cx.clone());
        cx.incoming_closed().await;
        Ok(())
    });
    let server = async move {
        let Ok(cx) = cx_rx.await else { return };
        Server::new(shared, cx).run(rx).await;
    };
    let (result, ()) = tokio::join!(connection, server);
    result.map_err(|e| {
        Error::new(
            agent_loop::ErrorKind::Io,
            format!("ACP connection on stdio: {e}"),
        )
    })
}
