import { type ServerToolPart, serverToolView } from '@kode/protocol'
import { expect, test } from 'vitest'

const part = (block: Record<string, unknown>): ServerToolPart =>
  ({ type: 'server_tool', format: 'x', block }) as ServerToolPart

test('a named block is a call, with its input ({} when it has none)', () => {
  expect(
    serverToolView(part({ type: 'server_tool_use', id: 's', name: 'web_search', input: { query: 'q' } })),
  ).toEqual({
    kind: 'call',
    name: 'web_search',
    input: { query: 'q' },
  })
  expect(serverToolView(part({ type: 'mcp_tool_use', name: 'fetch' }))).toEqual({
    kind: 'call',
    name: 'fetch',
    input: {},
  })
})

test("Gemini's code and its output", () => {
  expect(
    serverToolView(
      part({ type: 'executableCode', executableCode: { language: 'PYTHON', code: 'print(1)' } }),
    ),
  ).toEqual({
    kind: 'code',
    code: 'print(1)',
    language: 'PYTHON',
  })
  expect(
    serverToolView(
      part({ type: 'codeExecutionResult', codeExecutionResult: { outcome: 'OUTCOME_OK', output: '1\n' } }),
    ),
  ).toEqual({ kind: 'code_output', output: '1\n', outcome: 'OUTCOME_OK' })
  // Code that printed nothing comes without `output`.
  expect(
    serverToolView(part({ type: 'codeExecutionResult', codeExecutionResult: { outcome: 'OUTCOME_OK' } })),
  ).toEqual({
    kind: 'code_output',
    output: '',
    outcome: 'OUTCOME_OK',
  })
})

test('anything else is a result: its content, else the block; odd shapes never throw', () => {
  const search = { type: 'web_search_tool_result', tool_use_id: 's', content: [{ url: 'u' }] }
  expect(serverToolView(part(search))).toEqual({
    kind: 'result',
    type: 'web_search_tool_result',
    content: [{ url: 'u' }],
  })
  const item = { type: 'web_search_call', id: 'ws', action: { query: 'q' } }
  expect(serverToolView(part(item))).toEqual({ kind: 'result', type: 'web_search_call', content: item })
  // An executableCode without code, or with a list where an object belongs, is shown as it is.
  for (const odd of [
    { type: 'executableCode', executableCode: { language: 'PYTHON' } },
    { type: 'executableCode', executableCode: ['x'] },
    { type: 'codeExecutionResult', codeExecutionResult: null },
  ])
    expect(serverToolView(part(odd))).toMatchObject({ kind: 'result', type: odd.type })
})
