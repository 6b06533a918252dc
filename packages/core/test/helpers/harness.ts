import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Agent, type AgentOptions, type AgentRun, createAgent, type TaskOutcome } from '@kode/core'
import type { Event } from '@kode/protocol'
import { type ClientConfig, createClient, type LLMClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { createMemorySessionStore, type SessionStore } from '@kode/session'
import { createFileSessionStore } from '@kode/session/file'
import { afterEach, beforeEach } from 'vitest'

/** The fixed clock of every test: events, records and messages all say 1,000. */
export const NOW = 1_000

/** A counter id source: `prefix1`, `prefix2`, ... */
export function counter(prefix: string): () => string {
  let n = 0
  return () => `${prefix}${++n}`
}

/** One test's world: a scripted SSE server, a session store, and factories bound to them. */
export interface Harness {
  readonly server: SseTestServer
  readonly store: SessionStore
  /** The directory of the file store (`undefined` with the memory store). */
  readonly dir: string | undefined
  /** An openai-chat client (model `gpt-4o`: 128k window, catalog prices) against the server. */
  client(config?: Partial<ClientConfig>): LLMClient
  /** An agent on the harness client and store with deterministic ids (`id1`, ...) and clock. */
  createAgent(options?: Partial<AgentOptions>): ReturnType<typeof createAgent>
  /** Opens a second store over the same directory (file store only), as a restarted process would. */
  reopenStore(): SessionStore
}

/** A fresh harness per test. */
export function useHarness(kind: 'memory' | 'file' = 'memory'): () => Harness {
  let harness: Harness | undefined
  const stores: SessionStore[] = []
  let server: SseTestServer | undefined
  let dir: string | undefined
  beforeEach(async () => {
    server = await createSseTestServer()
    dir = kind === 'file' ? mkdtempSync(join(tmpdir(), 'kode-core-')) : undefined
    const openStore = () => {
      const store = dir
        ? createFileSessionStore({ dir, now: () => NOW, fsync: false })
        : createMemorySessionStore({ now: () => NOW })
      stores.push(store)
      return store
    }
    const store = openStore()
    const clientIds = counter('m')
    const agentIds = counter('id')
    const srv = server
    const client = (config: Partial<ClientConfig> = {}) =>
      createClient({
        api: 'openai-chat',
        model: 'gpt-4o',
        apiKey: 'sk-test-key-0123456789',
        baseUrl: srv.url,
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
        now: () => NOW,
        createId: clientIds,
        ...config,
      })
    harness = {
      server: srv,
      store,
      dir,
      client,
      createAgent: (options = {}) =>
        createAgent({
          client: client(),
          store,
          now: () => NOW,
          createId: agentIds,
          retry: { baseDelayMs: 1, maxDelayMs: 2 },
          ...options,
        }),
      reopenStore: openStore,
    }
  })
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => undefined)
    await server?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })
  return () => harness!
}

/** Runs `input`, aborting the run's signal at the first event for which `stop` is true. */
export async function collectInterrupting(
  agent: Agent,
  input: string,
  stop: (event: Event) => boolean,
): Promise<{ events: Event[]; outcome: TaskOutcome }> {
  const controller = new AbortController()
  const run = agent.run(input, { signal: controller.signal })
  const events: Event[] = []
  for await (const event of run) {
    events.push(event)
    if (stop(event)) controller.abort()
  }
  return { events, outcome: await run.done }
}

/** Every event of a run and how it ended. */
export async function collect<O>(run: AgentRun<O>): Promise<{ events: Event[]; outcome: TaskOutcome<O> }> {
  const events: Event[] = []
  for await (const event of run) events.push(event)
  return { events, outcome: await run.done }
}

/** Resolves after `ms` of real time (for tools that must finish out of order). */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** A promise with its resolver outside: lets a test decide when a tool finishes. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void
  const promise = new Promise<T>((resolve) => {
    open = resolve
  })
  return { promise, open }
}
