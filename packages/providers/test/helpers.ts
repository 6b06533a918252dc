import { fileURLToPath } from 'node:url'
import type { StreamItem } from '@kode/protocol'
import { type ClientConfig, createClient, type LLMClient, type LLMRequest } from '@kode/providers'
import {
  createSseTestServer,
  type FramedApi,
  frameFor,
  readChunksFile,
  type ScriptedResponse,
  type SseTestServer,
} from '@kode/providers/testing'
import { afterEach, beforeEach } from 'vitest'

/** The payload lines of a wire fixture under test/fixtures/wire. */
export function fixture(dir: string, name: string): string[] {
  return readChunksFile(fileURLToPath(new URL(`./fixtures/wire/${dir}/${name}.chunks.txt`, import.meta.url)))
}

/** A scripted 200 response streaming `payloads` framed the way `api` frames them. */
export function streamOf(
  api: FramedApi,
  payloads: readonly string[],
  extra: ScriptedResponse = {},
): ScriptedResponse {
  return { body: frameFor(api, payloads), ...extra }
}

/** A fresh test server per test; `use()` returns it. */
export function useServer(options?: Parameters<typeof createSseTestServer>[0]): () => SseTestServer {
  let server: SseTestServer | undefined
  beforeEach(async () => {
    server = await createSseTestServer(options)
  })
  afterEach(async () => {
    await server?.close()
  })
  return () => server!
}

/** Deterministic ids and clock, so final messages can be asserted exactly. */
export function deterministic(): Pick<ClientConfig, 'now' | 'createId'> {
  let n = 0
  return { now: () => 1_000, createId: () => `id-${++n}` }
}

/** A client against the test server with fast retries and deterministic ids. */
export function testClient(
  server: SseTestServer,
  config: Partial<ClientConfig> & Pick<ClientConfig, 'api' | 'model'>,
): LLMClient {
  return createClient({
    apiKey: 'sk-test-key-0123456789',
    baseUrl: server.url,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...deterministic(),
    ...config,
  })
}

/** Every item of one stream. */
export async function collect(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = []
  for await (const item of stream) items.push(item)
  return items
}

/** The simplest request: one user message. */
export function ask(text = 'Hi'): LLMRequest {
  return { messages: [{ role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text }] }] }
}

/** Joins a field of each fixture chunk's first choice delta (the expected streamed text). */
export function joinDeltas(payloads: readonly string[], field: string): string {
  let out = ''
  for (const line of payloads) {
    const delta = JSON.parse(line).choices?.[0]?.delta
    if (typeof delta?.[field] === 'string') out += delta[field]
  }
  return out
}

/** Responses opened before the client asks (see `openedFetch` in the testing kit). */
export { openedFetch } from '@kode/providers/testing'
