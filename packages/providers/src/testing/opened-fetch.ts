import type { SseTestServer } from './server.js'

/**
 * A `fetch` that answers a client's requests, in order, with responses of `server` opened before
 * the client asked: one POST per entry of `bodyBytes` (one when none is given), each resolved once
 * its headers and its first `bodyBytes[i]` body bytes have arrived. A client's idle watchdog starts
 * with its request, so a test that needs the watchdog to fire where a body stalls, and not before
 * the headers, would otherwise race the server with the timeout on a loaded machine; with the
 * responses in hand it can only fire on the stall. The client's abort is passed on to the request
 * it was answered with, so it closes the real connection. Answering more requests than were opened
 * throws.
 */
export async function openedFetch(server: SseTestServer, ...bodyBytes: number[]): Promise<typeof fetch> {
  const opened: { response: Response; request: AbortController }[] = []
  // In order: the server answers them from its queue in the order they arrive.
  for (const bytes of bodyBytes.length > 0 ? bodyBytes : [0]) opened.push(await open(server, bytes))
  let answered = 0
  return async (_input, init) => {
    const next = opened[answered++]
    if (!next) throw new Error(`openedFetch opened ${opened.length} response(s) only`)
    const { response, request } = next
    const signal = init?.signal
    if (signal?.aborted) request.abort(signal.reason)
    signal?.addEventListener('abort', () => request.abort(signal.reason), { once: true })
    return response
  }
}

async function open(
  server: SseTestServer,
  bodyBytes: number,
): Promise<{ response: Response; request: AbortController }> {
  const request = new AbortController()
  const response = await fetch(`${server.url}/v1/opened`, {
    method: 'POST',
    body: '{}',
    signal: request.signal,
  })
  if (bodyBytes > 0 && response.body) {
    // Reading a clone (a tee of the body) leaves what it read queued in the response for the client.
    const reader = response.clone().body!.getReader()
    for (let read = 0; read < bodyBytes; ) {
      const chunk = await reader.read()
      if (chunk.done) break
      read += chunk.value.length
    }
    reader.releaseLock()
  }
  return { response, request }
}
