import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'

/** What a relay is told of, on the way through. */
export interface RelayWatch {
  sent?(message: JSONRPCMessage): void
  received?(message: JSONRPCMessage): void
  closed?(): void
}

/**
 * A transport that passes everything to and from `inner` unchanged, telling `watch` of each
 * message sent and received (before passing it on) and of the transport closing.
 */
export function relay(inner: Transport, watch: RelayWatch): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => {
      watch.sent?.(message)
      return inner.send(message, options)
    },
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId
    },
    setProtocolVersion: (version) => inner.setProtocolVersion?.(version),
  }
  inner.onmessage = (message, extra) => {
    watch.received?.(message)
    outer.onmessage?.(message, extra)
  }
  inner.onclose = () => {
    watch.closed?.()
    outer.onclose?.()
  }
  inner.onerror = (error) => outer.onerror?.(error)
  return outer
}
