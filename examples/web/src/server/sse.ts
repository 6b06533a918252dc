import type { ServerResponse } from 'node:http'
import type { SentEvent } from './event-log.js'

/** Opens an SSE response: no caching, no proxy buffering, and a reconnect delay for EventSource. */
export function openEventStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  })
  res.write('retry: 1000\n\n')
}

/** One protocol event as an SSE frame; its JSON holds no newline, so one `data:` line carries it. */
export function eventFrame(event: SentEvent): string {
  return `id: ${event.id}\ndata: ${event.data}\n\n`
}

/**
 * A named control frame (`reset`: drop what you rendered, the whole log follows; `sub-agents`: the
 * call each replayed sub-agent belongs to). Without an id, so the client's last event id stays the
 * one of the last protocol event it saw.
 */
export function controlFrame(name: 'reset' | 'sub-agents', data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
}
