import { codeActFormatter, createAgent, type TaskOutcome } from '@kode/core'
import type { Event, HistoryEvent } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createSseTestServer } from '@kode/providers/testing'
import { createMemorySessionStore } from '@kode/session'
import { createCodeTool } from './code-tool.js'
import { DEFAULT_INTERPRETERS } from './interpreters.js'
import { SCRIPTED_TASK, scriptedCodeActModel } from './scripted-model.js'

/** What a scripted run produced. */
export interface ScriptedRun {
  events: Event[]
  outcome: TaskOutcome
  history: HistoryEvent[]
}

/**
 * A complete CodeAct run without a real model or API key: a scripted model served over SSE on
 * 127.0.0.1 (see `scriptedCodeActModel`), a CodeAct agent whose code blocks run in the sandboxed
 * code tool, real subprocesses included. `onEvent` sees every event as it happens.
 */
export async function runScriptedCodeAct(onEvent?: (event: Event) => void): Promise<ScriptedRun> {
  const server = await createSseTestServer({ handler: scriptedCodeActModel })
  const store = createMemorySessionStore()
  try {
    const agent = createAgent({
      client: createClient({
        api: 'openai-chat',
        model: 'gpt-4o',
        apiKey: 'not-a-real-key',
        baseUrl: server.url,
      }),
      store,
      tools: [createCodeTool()],
      historyFormatter: codeActFormatter({ languages: Object.keys(DEFAULT_INTERPRETERS) }),
      system: 'You are a careful assistant who checks answers by running code.',
    })
    const events: Event[] = []
    const run = agent.run(SCRIPTED_TASK)
    for await (const event of run) {
      events.push(event)
      onEvent?.(event)
    }
    return { events, outcome: await run.done, history: await agent.history() }
  } finally {
    await store.close()
    await server.close()
  }
}
