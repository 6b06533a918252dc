// A separate process running an agent on a file store, so a test can kill it mid-task.
//   agent-child <dir> <baseUrl> <sessionId> [json]
// Runs "Start the job": the model calls the `job` tool, which prints `tool-started` and never
// returns. The test kills the process there, like a crash in the middle of a tool. Prints
// `event <type>` per event, or `event <the event as JSON>` with `json`.
import { createAgent, defineTool } from '@kode/core'
import { createClient } from '@kode/providers'
import { createFileSessionStore } from '@kode/session/file'
import { Type } from '@sinclair/typebox'

const [dir, baseUrl, sessionId, format] = process.argv.slice(2)
if (!dir || !baseUrl || !sessionId) throw new Error('usage: agent-child <dir> <baseUrl> <sessionId>')

const job = defineTool({
  name: 'job',
  description: 'A long job',
  parameters: Type.Object({}),
  execute: () => {
    process.stdout.write('tool-started\n')
    return new Promise<string>(() => {})
  },
})
let ids = 0
const agent = createAgent({
  client: createClient({
    api: 'openai-chat',
    model: 'gpt-4o',
    apiKey: 'sk-test-key-0123456789',
    baseUrl,
    now: () => 1_000,
    createId: () => `m${++ids}`,
  }),
  store: createFileSessionStore({ dir, now: () => 1_000 }),
  tools: [job],
  system: 'You run jobs.',
  sessionId,
  now: () => 1_000,
  createId: () => `id${++ids}`,
})
for await (const event of agent.run('Start the job')) {
  process.stdout.write(`event ${format === 'json' ? JSON.stringify(event) : event.type}\n`)
}
