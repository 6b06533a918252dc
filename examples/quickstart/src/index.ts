import { createAgent, defineTool } from '@kode/core'
import { createClient } from '@kode/providers'
import { createMemorySessionStore } from '@kode/session'
import { Type } from '@sinclair/typebox'
import { startOfflineModel } from './offline.js'

// With ANTHROPIC_API_KEY set this talks to Claude; without, to a tiny scripted server (offline.ts).
const apiKey = process.env.ANTHROPIC_API_KEY
const offline = apiKey ? undefined : await startOfflineModel()
// ANTHROPIC_BASE_URL names a proxy or gateway as Anthropic's own SDK reads it: the root above /v1.
const gateway = process.env.ANTHROPIC_BASE_URL
const baseUrl = offline?.url ?? (gateway ? `${gateway.replace(/\/+$/, '')}/v1` : undefined)
const client = createClient({ api: 'anthropic', model: 'claude-sonnet-4-5', apiKey, baseUrl })

const clock = defineTool({
  name: 'clock',
  description: 'The current date and time in an IANA time zone, e.g. Asia/Tokyo',
  parameters: Type.Object({ timeZone: Type.String() }),
  execute: ({ timeZone }) => new Date().toLocaleString('en-GB', { timeZone, timeZoneName: 'short' }),
})

const agent = createAgent({ client, store: createMemorySessionStore(), tools: [clock] })

for await (const event of agent.run('What time is it in Tokyo right now?')) {
  if (event.type === 'assistant_text_delta') process.stdout.write(event.content)
  if (event.type === 'tool_call') console.log(`\n→ ${event.toolName}(${event.arguments})`)
  if (event.type === 'tool_result') console.log(`← ${event.status}: ${event.result}`)
  if (event.type === 'error') console.error(event.errorMessage)
  if (event.type === 'task_finish') console.log(`\n[${event.reason}]`)
  // A task that did not complete (a wrong key, no network) is a failed run for a shell or CI.
  if (event.type === 'task_finish' && event.reason !== 'completed') process.exitCode = 1
}
await offline?.close()
