import { actionCallId, type FormatterInstructions, reactFormatter } from '@kode/core'
import type { AssistantMessage, StopReason, ToolResultMessage } from '@kode/protocol'
import { describe, expect, test } from 'vitest'

function reply(text: string, stopReason: StopReason = 'stop'): AssistantMessage {
  return { role: 'assistant', id: 'm1', createdAt: 1, parts: [{ type: 'text', text }], stopReason }
}

const react = reactFormatter()
/** What a ReAct agent's requests carry: no native tools. */
const NO_TOOLS: FormatterInstructions = { system: 'the format' }

describe('reading ReAct responses', () => {
  test('Thought, Action and Args make one action', () => {
    const text = 'Thought: I need the file.\nAction: read_file\nArgs: {"path": "a.txt"}'
    expect(react.parseActions(reply(text))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
    ])
  })

  test('arguments may span lines and sit in a json fence', () => {
    const text = 'Action: write\nArgs:\n```json\n{\n  "path": "a.txt",\n  "text": "}{"\n}\n```\nmore'
    expect(react.parseActions(reply(text))).toEqual([
      { name: 'write', argumentsJson: '{\n  "path": "a.txt",\n  "text": "}{"\n}' },
    ])
  })

  test('labels in bold or italics, with the colon inside or outside, are labels', () => {
    const expected = [{ name: 'read_file', argumentsJson: '{"path": "a.txt"}' }]
    const inside = '**Thought:** I need the file.\n**Action:** read_file\n**Args:** {"path": "a.txt"}'
    expect(react.parseActions(reply(inside))).toEqual(expected)
    const outside =
      '**Thought**: I need the file.\n**Action**: `read_file`\n**Args**:\n```json\n{"path": "a.txt"}\n```'
    expect(react.parseActions(reply(outside))).toEqual(expected)
    expect(react.parseActions(reply('*Action:* read_file\n__Args__: {"path": "a.txt"}'))).toEqual(expected)
    const answer = reply('**Thought:** I know it.\n**Final Answer:** 42')
    expect(react.parseActions(answer)).toEqual([])
    expect(react.answerText(answer)).toBe('42')
  })

  test('a label and its value in bold together keep no emphasis marker in the answer or the name', () => {
    const answer = reply('**Final Answer: 42**\nThat is all.')
    expect(react.answerText(answer)).toBe('42\nThat is all.')
    expect(react.answerText(reply('__Final Answer: It is *very* big__'))).toBe('It is *very* big')
    // A marker the value itself closes (its own emphasis) is kept.
    expect(react.answerText(reply('Final Answer: it is **42**'))).toBe('it is **42**')
    expect(react.parseActions(reply('**Action: read_file**\n**Args: {"path": "a.txt"}**'))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
    ])
  })

  test("LangChain's `Action Input:` is the action's arguments", () => {
    const text = 'Thought: I need the file.\nAction: read_file\nAction Input: {"path": "a.txt"}\n'
    expect(react.parseActions(reply(text))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
    ])
    expect(react.parseActions(reply('Action: read_file\n**Action Input:** a.txt'))).toEqual([
      { name: 'read_file', argumentsJson: 'a.txt' },
    ])
  })

  test('arguments in a fence indented up to three spaces, or in a block indented four, are read from inside it', () => {
    const expected = [{ name: 'write', argumentsJson: '{\n     "path": "a.txt"\n   }' }]
    const fenced = 'Action: write\nArgs:\n   ```json\n   {\n     "path": "a.txt"\n   }\n   ```\nThought: done'
    expect(react.parseActions(reply(fenced))).toEqual(expected)
    const indented = 'Action: write\nArgs:\n\n    {"path": "a.txt"}\n\nThought: done'
    expect(react.parseActions(reply(indented))).toEqual([
      { name: 'write', argumentsJson: '{"path": "a.txt"}' },
    ])
  })

  test('an action shown in a fence indented up to three spaces is text; an indented line is still a label', () => {
    const shown = 'Like this:\n   ```\n   Action: delete_all\n   ```\nFinal Answer: that is the format'
    expect(react.parseActions(reply(shown))).toEqual([])
    expect(react.answerText(reply(shown))).toBe('that is the format')
    // In a list item, four spaces of indentation are the item's text, not a code block.
    const listed = '1. Thought: first the file.\n\n    Action: read_file\n    Args: {"path": "a.txt"}'
    expect(react.parseActions(reply(listed))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
    ])
  })

  test('labels are case-insensitive and a quoted tool name is unquoted', () => {
    expect(react.parseActions(reply('action: `read_file`\nARGS: {}'))).toEqual([
      { name: 'read_file', argumentsJson: '{}' },
    ])
  })

  test('an action without Args has no arguments', () => {
    expect(react.parseActions(reply('Thought: list them.\nAction: list_files\n'))).toEqual([
      { name: 'list_files', argumentsJson: '' },
    ])
  })

  test('only the first action counts, and an imagined observation is ignored', () => {
    const text =
      'Action: a\nArgs: {"n": 1}\nObservation: 42\nThought: now b\nAction: b\nArgs: {}\nFinal Answer: 42'
    expect(react.parseActions(reply(text))).toEqual([{ name: 'a', argumentsJson: '{"n": 1}' }])
  })

  test('arguments that are not a JSON object are passed on as written', () => {
    expect(react.parseActions(reply('Action: read_file\nArgs: path=a.txt'))).toEqual([
      { name: 'read_file', argumentsJson: 'path=a.txt' },
    ])
    expect(react.parseActions(reply('Action: read_file\nArgs: {"path": "a.txt"'))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"' },
    ])
  })

  test('a final answer is no action, and its text is the answer', () => {
    const message = reply('Thought: I know it.\nFinal Answer: It is 42.\nThat is all.')
    expect(react.parseActions(message)).toEqual([])
    expect(react.answerText(message)).toBe('It is 42.\nThat is all.')
  })

  test('a response with CRLF line endings: a code block it shows closes, so the action after it counts', () => {
    const text =
      'Thought: like this:\r\n```\r\nexample\r\n```\r\nAction: read_file\r\nArgs: {"path": "a.txt"}\r\n'
    expect(react.parseActions(reply(text))).toEqual([
      { name: 'read_file', argumentsJson: '{"path": "a.txt"}' },
    ])
  })

  test('an action before a final answer wins; plain text is its own answer', () => {
    expect(react.parseActions(reply('Action: a\nArgs: {}\nFinal Answer: done'))).toHaveLength(1)
    expect(react.parseActions(reply('Just text.'))).toEqual([])
    expect(react.answerText(reply('Just text.'))).toBe('Just text.')
  })

  test('a cut response: unfinished arguments are incomplete, an unfinished name line is no action', () => {
    expect(react.parseActions(reply('Action: read_file\nArgs: {"pa', 'aborted'))).toEqual([
      { name: 'read_file', argumentsJson: '{"pa', incomplete: true },
    ])
    expect(react.parseActions(reply('Action: read_file\n', 'length'))).toEqual([
      { name: 'read_file', argumentsJson: '', incomplete: true },
    ])
    expect(react.parseActions(reply('Thought: x\nAction: read_fi', 'aborted'))).toEqual([])
  })

  test('an interrupted action is recorded with a placeholder', () => {
    const message = reply('Action: read_file\nArgs: {"pa', 'aborted')
    const [action] = react.parseActions(message)
    expect(react.needsPendingPlaceholder(action!, message)).toBe(true)
  })
})

describe('the ReAct request', () => {
  const tools = [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }]

  test('offers no native tools; the system text explains the format and lists the tools', () => {
    const { tools: offered, system } = react.instructions(tools)
    expect(offered).toBeUndefined()
    expect(system).toContain('Action: the name of the tool')
    expect(system).toContain('Final Answer:')
    expect(system).toContain('## read_file\n\nReads a file\n\nArgs (JSON Schema): {"type":"object"}')
  })

  test('the system text can be replaced', () => {
    const custom = reactFormatter({ instructions: (list) => `tools: ${list.map((t) => t.name)}` })
    expect(custom.instructions(tools)).toEqual({ system: 'tools: read_file' })
  })
})

describe('past ReAct actions in the provider view', () => {
  const text = 'Thought: read it\nAction: read_file\nArgs: {"path":"a.txt"}'
  const action: AssistantMessage = {
    ...reply(text, 'stop'),
    parts: [
      { type: 'text', text },
      { type: 'tool_call', id: actionCallId('m1', 0), name: 'read_file', argumentsJson: '{"path":"a.txt"}' },
    ],
  }
  const result: ToolResultMessage = {
    role: 'tool',
    id: 'r1',
    createdAt: 2,
    toolCallId: actionCallId('m1', 0),
    toolName: 'read_file',
    status: 'success',
    outputText: 'hello',
    parts: [],
  }

  test("with history: 'tool_calls' they are sent as tool calls and results, as persisted", () => {
    const asCalls = reactFormatter({ history: 'tool_calls' })
    expect(asCalls.isAction(action)).toBe(true)
    expect(asCalls.formatAction(action, NO_TOOLS)).toBe(action)
    expect(asCalls.formatResult(result, NO_TOOLS)).toBe(result)
  })

  test('by default (no native tools in the requests) and as text: the call is dropped (the text states it) and the result is an observation', () => {
    for (const asText of [react, reactFormatter({ history: 'text' })]) {
      expect(asText.isAction(action)).toBe(true)
      expect(asText.formatAction(action, NO_TOOLS)).toEqual({ ...action, parts: [{ type: 'text', text }] })
      expect(asText.formatResult(result, NO_TOOLS)).toEqual({
        role: 'user',
        id: 'r1',
        createdAt: 2,
        parts: [{ type: 'text', text: 'Observation: hello' }],
      })
      expect(asText.formatResult({ ...result, status: 'error', outputText: '' }, NO_TOOLS)).toMatchObject({
        parts: [{ type: 'text', text: 'Observation (error): (no output)' }],
      })
    }
  })

  test('by default, requests that declare native tools get the actions as tool calls', () => {
    const withTools: FormatterInstructions = {
      tools: [{ name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } }],
    }
    expect(react.formatAction(action, withTools)).toBe(action)
    expect(react.formatResult(result, withTools)).toBe(result)
  })

  test('an action whose name no provider accepts goes back as text even with tool-call history', () => {
    const badText = 'Action: read file\nArgs: {"path":"a.txt"}'
    const bad: AssistantMessage = {
      ...reply(badText),
      parts: [
        { type: 'text', text: badText },
        {
          type: 'tool_call',
          id: actionCallId('m1', 0),
          name: 'read file',
          argumentsJson: '{"path":"a.txt"}',
        },
      ],
    }
    const badResult: ToolResultMessage = {
      ...result,
      toolName: 'read file',
      status: 'error',
      outputText: 'unknown tool',
    }
    const asCalls = reactFormatter({ history: 'tool_calls' })
    expect(asCalls.formatAction(bad, NO_TOOLS)).toEqual({ ...bad, parts: [{ type: 'text', text: badText }] })
    expect(asCalls.formatResult(badResult, NO_TOOLS)).toMatchObject({
      role: 'user',
      parts: [{ type: 'text', text: 'Observation (error): unknown tool' }],
    })
    // A well-named call in the same session is still sent as a tool call.
    expect(asCalls.formatAction(action, NO_TOOLS)).toBe(action)
  })

  test('as text: a call the text does not state (a native one) is written out', () => {
    const native: AssistantMessage = {
      ...reply('Let me look.'),
      parts: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_call', id: 'call_xyz', name: 'read_file', argumentsJson: '{}' },
      ],
    }
    expect(reactFormatter({ history: 'text' }).formatAction(native, NO_TOOLS)).toMatchObject({
      parts: [
        { type: 'text', text: 'Let me look.' },
        { type: 'text', text: '\n\nAction: read_file\nArgs: {}' },
      ],
    })
  })
})
