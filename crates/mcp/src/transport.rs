//! One transport type for both kinds of MCP server. rmcp's service loop (handshake, request
//! routing, the peer) is generic over its transport: serving stdio and Streamable HTTP servers
//! through their own types built that loop twice into the binary. Behind this boxed transport
//! it is built once; the price is one allocation per message, nothing a user could notice next
//! to the message's own JSON.

use std::future::Future;
use std::pin::Pin;

use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// `Transport` with its futures boxed, so that it can be a trait object.
trait DynTransport: Send {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), BoxError>>;
    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>>;
    fn close(&mut self) -> BoxFuture<'_, Result<(), BoxError>>;
}

impl<T: Transport<RoleClient> + 'static> DynTransport for T {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), BoxError>> {
        let sent = Transport::send(self, item);
        Box::pin(async move { sent.await.map_err(BoxError::from) })
    }

    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>> {
        Box::pin(Transport::receive(self))
    }

    fn close(&mut self) -> BoxFuture<'_, Result<(), BoxError>> {
        Box::pin(async move { Transport::close(self).await.map_err(BoxError::from) })
    }
}

/// A stdio or Streamable HTTP transport, as one type.
pub struct AnyTransport(Box<dyn DynTransport>);

impl AnyTransport {
    pub fn new(transport: impl Transport<RoleClient> + 'static) -> Self {
        AnyTransport(Box::new(transport))
    }
}

/// The underlying transport's error.
#[derive(Debug)]
pub struct TransportError(BoxError);

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

impl Transport<RoleClient> for AnyTransport {
    type Error = TransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let sent = self.0.send(item);
        async move { sent.await.map_err(TransportError) }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.0.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        let closed = self.0.close();
        async move { closed.await.map_err(TransportError) }
    }
}
