import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { CLIENT_NAMES, CLIENTS } from '../agents/clients/index.mjs'
import { checkRequest } from '../agents/history-check.mjs'
import { startAgentsServer } from '../agents/server.mjs'
import { callsOf, FINAL_TEXT, keyOf, PROMPT, runTool, SYSTEM, TURNS, textDeltas } from '../agents/task.mjs'
import { mismatch } from '../agents/verify.mjs'

// Keeps the agents benchmark honest: every agent loop it compares (Kode from its sources here)
// completes the scripted task through the server, and the checks that would mark one wrong do fire.

let server: Awaited<ReturnType<typeof startAgentsServer>>
beforeAll(async () => {
  server = await startAgentsServer()
})
afterAll(() => server.close())

describe.each(CLIENT_NAMES)('%s', (client) => {
  test('runs the whole task: every tool call once, the scripted final text', {
    timeout: 120_000,
  }, async () => {
    const ran: string[] = []
    let modelCalls = 0
    const bare = globalThis.fetch
    // Counted before the client is built: some capture global fetch then.
    globalThis.fetch = (input, init) => {
      if (String(input instanceof Request ? input.url : input).endsWith('/chat/completions')) modelCalls++
      return bare(input, init)
    }
    try {
      const { prepare } = await CLIENTS[client as keyof typeof CLIENTS].load()
      const run = await prepare({
        origin: server.origin,
        record: (key: string) => ran.push(key),
        runTool,
        keyOf,
        maxTurns: TURNS + 5,
      })
      const result = await run()
      expect(result.finalText).toBe(FINAL_TEXT)
      expect(mismatch(result, ran, modelCalls)).toBeUndefined()
    } finally {
      globalThis.fetch = bare
    }
  })
})

/** The history a correct client sends for `turn`, as Chat Completions messages. */
function history(turn: number) {
  const messages: Record<string, unknown>[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: PROMPT },
  ]
  for (let earlier = 1; earlier < turn; earlier++) {
    const calls = callsOf(earlier)
    messages.push({
      role: 'assistant',
      content: textDeltas(earlier).join(''),
      tool_calls: calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    })
    for (const c of calls)
      messages.push({ role: 'tool', tool_call_id: c.id, content: runTool(c.name, c.args) })
  }
  return messages
}

test('the server reads the turn from a correct history', () => {
  expect(checkRequest({ stream: true, messages: history(1) })).toEqual({ turn: 1 })
  expect(checkRequest({ stream: true, messages: history(7) })).toEqual({ turn: 7 })
})

test('a history with a garbled tool result, lost text or no streaming is answered as wrong', () => {
  const garbled = history(4)
  const result = garbled.findLast((m) => m.role === 'tool')!
  result.content = `${result.content} `
  expect(checkRequest({ stream: true, messages: garbled }).problem).toMatch(/^result of call_3_/)

  const textless = history(4).map((m) => (m.role === 'assistant' ? { ...m, content: null } : m))
  expect(checkRequest({ stream: true, messages: textless }).problem).toMatch(/text/)

  expect(checkRequest({ stream: false, messages: history(2) }).problem).toMatch(/not streamed/)
})

test('a tool that ran twice, never ran, or a wrong final text is reported', () => {
  const keys = Array.from({ length: TURNS - 1 }, (_, i) => callsOf(i + 1).map((c) => keyOf(c.args))).flat()
  expect(mismatch({ finalText: FINAL_TEXT }, keys, TURNS)).toBeUndefined()
  expect(mismatch({ finalText: FINAL_TEXT }, [...keys, keys[5]], TURNS)).toMatch(/more than once/)
  expect(mismatch({ finalText: FINAL_TEXT }, keys.slice(1), TURNS)).toMatch(/never ran/)
  expect(mismatch({ finalText: 'done' }, keys, TURNS)).toMatch(/^final text/)
  expect(mismatch({ finalText: FINAL_TEXT }, keys, TURNS + 1)).toMatch(/model calls/)
})
