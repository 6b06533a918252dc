import type { StreamItem } from '@kode/protocol'
import { createClient, ProviderError } from '@kode/providers'

/** How each stalled response ended for the caller. */
export interface StalledSummary {
  /** Ended by the idle timeout: the error's code. */
  idle: string
  /** Ended by the caller's signal: the final message's stop reason. */
  aborted: string
}

/**
 * Two responses that stream some text and then stall with the connection open: one must end on
 * the client's idle timeout, the other when the caller aborts. Before either, while the body's
 * read is pending, the garbage is collected: nothing but the stream keeps the request alive then,
 * and it must still end (some runtimes hold what links the request's signal to `fetch` weakly).
 * `baseUrl` is the model server's stalling route.
 */
export async function runStalledStreams(baseUrl: string): Promise<StalledSummary> {
  const idle = await endOf(baseUrl, { idleTimeoutMs: 200 }, () => collectGarbage())
  const controller = new AbortController()
  const aborted = await endOf(
    baseUrl,
    {},
    () => {
      collectGarbage()
      controller.abort()
    },
    controller.signal,
  )
  return { idle, aborted }
}

async function endOf(
  baseUrl: string,
  config: { idleTimeoutMs?: number },
  afterFirstText: () => void,
  signal?: AbortSignal,
): Promise<string> {
  const client = createClient({
    api: 'openai-chat',
    model: 'gpt-4.1-mini',
    apiKey: 'sk-runtime-test',
    baseUrl,
    retry: { maxAttempts: 1 },
    ...config,
  })
  const request = {
    messages: [
      { role: 'user' as const, id: 'u1', createdAt: 0, parts: [{ type: 'text' as const, text: 'Hi' }] },
    ],
  }
  let last: StreamItem | undefined
  let first = true
  try {
    for await (const item of client.stream(request, { signal })) {
      last = item
      if (first && item.type === 'text_delta') {
        first = false
        // Runs once the loop waits for the next item, that is while the body's read is pending.
        setTimeout(afterFirstText, 0)
      }
    }
  } catch (error) {
    return ProviderError.is(error) ? String(error.code) : String(error)
  }
  return last?.type === 'done' ? String(last.message.stopReason) : `ended after ${last?.type}`
}

/** A full collection, through whatever the runtime exposes (each is started with it exposed). */
function collectGarbage(): void {
  const host = globalThis as { Bun?: { gc(force: boolean): void }; gc?: () => void }
  if (host.Bun) host.Bun.gc(true)
  else if (host.gc) host.gc()
  else throw new Error('no garbage collector exposed: start the runtime with it (--expose-gc)')
}
