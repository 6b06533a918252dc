import { createAgent, defineTool } from '@kode/core'
import type { Event } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createMemorySessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'

/** What one run of the task did, in a form every runtime prints the same way. */
export interface TaskSummary {
  /** The event types, in order, of the main session. */
  events: string[]
  /** The streamed text of every turn, joined. */
  text: string
  /** The tool result the model saw. */
  toolResult: string
  /** The persisted history: `role` (or `type`) of each record. */
  history: string[]
  reason: string
  /** The messages of `error` events: none, when all went well. */
  errors: string[]
}

/**
 * The same small task on every runtime: a client against `baseUrl` (an OpenAI-compatible SSE
 * server), one tool, the memory store. Uses only what the main entries offer, global `fetch`
 * and nothing from Node.
 */
export async function runTask(baseUrl: string): Promise<TaskSummary> {
  const client = createClient({
    api: 'openai-chat',
    model: 'gpt-4.1-mini',
    apiKey: 'sk-runtime-test',
    baseUrl,
  })
  const add = defineTool({
    name: 'add',
    description: 'Adds two numbers',
    parameters: Type.Object({ a: Type.Number(), b: Type.Number() }),
    execute: ({ a, b }) => String(a + b),
  })
  const store = createMemorySessionStore()
  const agent = createAgent({ client, store, tools: [add] })
  const events: Event[] = []
  for await (const event of agent.run('What is 2 + 3?')) events.push(event)
  const history = await agent.history()
  await store.close()
  const finish = events.find((e) => e.type === 'task_finish')
  const result = events.find((e) => e.type === 'tool_result')
  return {
    events: events.map((e) => e.type),
    text: events.map((e) => (e.type === 'assistant_text_delta' ? e.content : '')).join(''),
    toolResult: result?.type === 'tool_result' ? result.result : '',
    history: history.map((record) => ('role' in record ? record.role : record.type)),
    reason: finish?.type === 'task_finish' ? (finish.reason ?? '') : '',
    errors: events.flatMap((e) => (e.type === 'error' ? [e.errorMessage] : [])),
  }
}
