import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type AgentOptions, createAgent, type TaskOutcome } from '@kode/core'
import { connectMcpServer, type McpConnection, type McpServerOptions } from '@kode/mcp'
import type { Event, HistoryEvent, ToolResultMessage } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { createFileSessionStore, type SessionStore } from '@kode/session'
import { afterEach, beforeEach } from 'vitest'

/** One test's world: a scripted model on 127.0.0.1, a file store in a temp dir, MCP connections closed after. */
export interface Harness {
  readonly model: SseTestServer
  readonly dir: string
  store: SessionStore
  /** Connects a server, closed when the test ends. */
  connect(options: McpServerOptions): Promise<McpConnection>
  agent(options?: Partial<AgentOptions>): ReturnType<typeof createAgent>
  /** A second store over the same directory, as a restarted process opens it. */
  reopenStore(): SessionStore
}

export function useHarness(): () => Harness {
  let harness: Harness | undefined
  let connections: McpConnection[] = []
  let cleanup: (() => Promise<void>) | undefined
  beforeEach(async () => {
    const model = await createSseTestServer()
    const dir = mkdtempSync(join(tmpdir(), 'kode-mcp-'))
    const openStore = () => createFileSessionStore({ dir: join(dir, 'sessions'), fsync: false })
    let ids = 0
    harness = {
      model,
      dir,
      store: openStore(),
      async connect(options) {
        const connection = await connectMcpServer(options)
        connections.push(connection)
        return connection
      },
      agent(options = {}) {
        return createAgent({
          client: createClient({
            api: 'openai-chat',
            model: 'gpt-4o',
            apiKey: 'sk-test',
            baseUrl: model.url,
          }),
          store: harness!.store,
          createId: () => `id${++ids}`,
          retry: { baseDelayMs: 1, maxDelayMs: 2 },
          ...options,
        })
      },
      reopenStore: openStore,
    }
    cleanup = async () => {
      await Promise.all(connections.map((c) => c.close()))
      connections = []
      await model.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
  afterEach(async () => {
    await cleanup?.()
  })
  return () => harness!
}

/** Runs a task to its end, collecting its events. */
export async function collect(run: AsyncIterable<Event> & { done: Promise<TaskOutcome> }) {
  const events: Event[] = []
  for await (const event of run) events.push(event)
  return { events, outcome: await run.done }
}

/** The tool results of a history, by call id. */
export function toolResults(history: readonly HistoryEvent[]): Record<string, ToolResultMessage> {
  const results: Record<string, ToolResultMessage> = {}
  for (const record of history)
    if ('role' in record && record.role === 'tool') results[record.toolCallId] = record
  return results
}

/** The tool names offered in the model request `index`. */
export function offeredTools(model: SseTestServer, index: number): string[] {
  const body = model.requests[index]?.body as { tools?: { function: { name: string } }[] }
  return (body.tools ?? []).map((tool) => tool.function.name)
}
