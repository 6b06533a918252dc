import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { guardAnswers } from './answer-guard.js'
import type { AnswerWatch, ConnectionLoss } from './connection-loss.js'
import { terminateSession } from './http.js'
import type { McpServerOptions } from './options.js'
import { relay } from './relay.js'
import { SCHEMA_VALIDATOR } from './schema-validator.js'
import type { StdioServer } from './stdio.js'

/** How Kode introduces itself in `initialize`. */
const CLIENT_INFO = { name: 'kode', version: '0.1.0' }

/** A handshake in progress or done: the client, and how to shut down what it started. */
export interface Link {
  client: Client
  transport: Transport
  kind: 'stdio' | 'streamable-http' | 'sse'
  stdio: StdioServer | undefined
  /** What lost the server (see `ConnectionLoss`), if anything did: the client is closed just after. */
  loss(): ConnectionLoss | undefined
  /** Closes the client and transport; for stdio, resolves once the child is gone. */
  shutdown(): Promise<void>
}

/** The longest delay `setTimeout` honours: our own deadline and the agent's govern, not the SDK's. */
export const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * A client over the transport `open` makes. `open` gets `lose`, for a transport to report that its
 * server is gone (see `watchExchanges`, and a stdio line past `maxMessageBytes`): the client is then
 * closed, which fails every request in flight and ends the connection, as a stdio server's closed
 * pipes do. It gets `answers` too, to fail requests whose answer will never come though the
 * server lives on: those fail alone (see `guardAnswers`).
 */
export function createLink(
  open: (lose: (loss: ConnectionLoss) => void, answers: AnswerWatch) => Transport,
  kind: Link['kind'],
  stdio: StdioServer | undefined,
  options: McpServerOptions,
): Link {
  const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: SCHEMA_VALIDATOR })
  let lost: ConnectionLoss | undefined
  const lose = (loss: ConnectionLoss) => {
    if (lost) return
    lost = loss
    // Once the request whose exchange failed has settled with its own error (a refused
    // initialize stays a connect_failed), not before.
    setTimeout(() => void client.close().catch(() => undefined), 0)
  }
  // Once the SDK has read what came before the end of the stream that carried them (an answer
  // among it settles its request at once, and is not given up on).
  const answers: AnswerWatch = {
    unanswered: (ids, why, detail) => setTimeout(() => guard.giveUp(ids, why, detail), 0),
    waiting: (ids) => guard.waiting(ids),
  }
  const inner = open(lose, answers)
  // Outside the tap: a request given up on is not a message the server sent.
  const guard = guardAnswers(options.onMessage ? tap(inner, options.onMessage) : inner)
  const { transport } = guard
  let shutting: Promise<void> | undefined
  return {
    client,
    transport,
    kind,
    stdio,
    loss: () => lost,
    shutdown() {
      shutting ??= (async () => {
        if (kind === 'streamable-http') await terminateSession(inner, 1_000)
        await client.close().catch(() => undefined)
        if (stdio) await stdio.reap()
      })()
      return shutting
    },
  }
}

/** Passes every message through `onMessage` on its way (a listener's throw is its own problem, not the call's). */
function tap(inner: Transport, onMessage: NonNullable<McpServerOptions['onMessage']>): Transport {
  const see = (direction: 'send' | 'receive', message: unknown) => {
    try {
      onMessage(direction, message)
    } catch {
      // A logging hook must not break the connection.
    }
  }
  return relay(inner, {
    sent: (message) => see('send', message),
    received: (message) => see('receive', message),
  })
}
