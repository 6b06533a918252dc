import type { AssistantMessage, HistoryEvent, ServerToolPart } from '@kode/protocol'
import { validateEvent } from '@kode/protocol'
import { deriveReplayEvents, exportHtml } from '@kode/session'
import { describe, expect, test } from 'vitest'

const use: ServerToolPart = {
  type: 'server_tool',
  format: 'anthropic',
  block: {
    type: 'server_tool_use',
    id: 'srvtoolu_01',
    name: 'web_search',
    input: { query: 'printing press </pre><script>alert(1)</script>' },
  },
}
const result: ServerToolPart = {
  type: 'server_tool',
  format: 'anthropic',
  block: {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_01',
    content: [{ type: 'web_search_result', title: 'Printing press', url: 'https://example.org/p' }],
  },
}
const history: HistoryEvent[] = [
  { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'When?' }] },
  {
    role: 'assistant',
    id: 'a1',
    createdAt: 2,
    responseId: 'msg_1',
    parts: [{ type: 'text', text: 'Searching. ' }, use, result, { type: 'text', text: 'Around 1440.' }],
    stopReason: 'stop',
  } satisfies AssistantMessage,
]

describe('server-tool parts in replay and export', () => {
  test('replay carries them on response_complete, in order, and makes no tool_call of them', () => {
    const events = deriveReplayEvents(history, { sessionId: 's' })
    const complete = events.find((e) => e.type === 'response_complete')
    expect(complete).toEqual({
      type: 'response_complete',
      sessionId: 's',
      timestamp: 2,
      responseId: 'msg_1',
      content: 'Searching. Around 1440.',
      serverTools: [use, result],
    })
    expect(() => validateEvent(complete)).not.toThrow()
    expect(events.some((e) => e.type === 'tool_call')).toBe(false)
  })

  test('the export shows the call with its name and input and the result with its type, escaped', () => {
    const page = exportHtml(history)
    expect(page).toContain('Server tool <code>web_search</code>')
    expect(page).toContain('Server tool result <code>web_search_tool_result</code>')
    expect(page).toContain('https://example.org/p')
    expect(page).toContain('printing press &lt;/pre&gt;&lt;script&gt;')
    expect(page).not.toContain('<script>alert(1)')
  })
})

test("the export shows Gemini's code as code and what it printed as text", () => {
  const code: ServerToolPart = {
    type: 'server_tool',
    format: 'google',
    block: { type: 'executableCode', executableCode: { language: 'PYTHON', code: 'print(2 ** 10 < 3)' } },
  }
  const output: ServerToolPart = {
    type: 'server_tool',
    format: 'google',
    block: { type: 'codeExecutionResult', codeExecutionResult: { outcome: 'OUTCOME_OK', output: 'False\n' } },
  }
  const page = exportHtml([
    { role: 'user', id: 'u1', createdAt: 1, parts: [{ type: 'text', text: 'Compute' }] },
    { role: 'assistant', id: 'a1', createdAt: 2, parts: [code, output], stopReason: 'stop' },
  ])
  expect(page).toContain('Code run by the provider <code>python</code>')
  expect(page).toContain('<pre><code>print(2 ** 10 &lt; 3)</code></pre>')
  expect(page).toContain('Code output <code>OUTCOME_OK</code>')
  expect(page).toContain('<pre>False\n</pre>')
  expect(page).not.toContain('executableCode')
})
