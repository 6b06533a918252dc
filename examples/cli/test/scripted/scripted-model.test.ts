import { createClient } from '@kode/providers'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { anthropicStream } from '../../src/scripted/anthropic-stream.js'
import { readScriptedRequest, type ScriptedRequest } from '../../src/scripted/request.js'
import { DEMO_PROMPT, scriptedReply } from '../../src/scripted/script.js'
import { type ScriptedModel, startScriptedModel } from '../../src/scripted/server.js'

const MAIN_TOOLS = ['read_file', 'list_dir', 'search_text', 'todo_write', 'explore']

function request(fields: Partial<ScriptedRequest>): ScriptedRequest {
  return {
    tools: MAIN_TOOLS,
    system: '',
    prompt: DEMO_PROMPT,
    turn: 0,
    results: new Map(),
    size: 100,
    ...fields,
  }
}

const toolNames = (r: ReturnType<typeof scriptedReply>) =>
  r.blocks.flatMap((b) => ('toolUse' in b ? [b.toolUse.name] : []))

describe('readScriptedRequest', () => {
  test('finds the latest prompt, the turn since it and the tool results by tool name', () => {
    const body = {
      system: [{ type: 'text', text: 'You are explore' }],
      tools: [{ name: 'read_file' }],
      messages: [
        { role: 'user', content: 'old prompt' },
        { role: 'assistant', content: [{ type: 'text', text: 'old answer' }] },
        { role: 'user', content: [{ type: 'text', text: 'new prompt' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: '1| hi' }] }],
        },
      ],
    }
    const read = readScriptedRequest(body, JSON.stringify(body))
    expect(read.prompt).toBe('new prompt')
    expect(read.turn).toBe(1)
    expect(read.system).toBe('You are explore')
    expect(read.tools).toEqual(['read_file'])
    expect(read.results.get('read_file')).toEqual(['1| hi'])
  })

  test('reads a body that is not an object as an empty request', () => {
    expect(readScriptedRequest('nonsense', 'nonsense')).toMatchObject({ prompt: '', turn: 0, tools: [] })
  })
})

describe('scriptedReply', () => {
  test('the tour starts with thinking and three parallel tool calls', () => {
    const reply = scriptedReply(request({}))
    expect(reply.blocks[0]).toHaveProperty('thinking')
    expect(toolNames(reply)).toEqual(['todo_write', 'read_file', 'list_dir'])
  })

  test('the second turn of the tour calls the explore sub-agent', () => {
    expect(toolNames(scriptedReply(request({ turn: 1 })))).toEqual(['todo_write', 'explore'])
  })

  test('the last turn of the tour sums up what the tools returned, without tool calls', () => {
    const results = new Map([
      ['read_file', ['1| # Kode\n2| ']],
      ['list_dir', ['core/\nREADME.md\nsession/']],
      ['explore', ['`createAgent` is defined in a.ts at line 3.']],
    ])
    const reply = scriptedReply(request({ turn: 3, results }))
    expect(toolNames(reply)).toEqual([])
    const text = (reply.blocks[0] as { text: string }).text
    expect(text).toContain('the project is **Kode**')
    expect(text).toContain('- `core/`\n- `session/`')
    expect(text).toContain('> `createAgent` is defined in a.ts at line 3.')
  })

  test('a request without the explore tool and with its system prompt is the sub-agent', () => {
    const reply = scriptedReply(
      request({ tools: ['read_file', 'search_text'], system: 'You are explore, ...' }),
    )
    expect(toolNames(reply)).toEqual(['search_text'])
  })

  test('the sub-agent reads the first match of its search', () => {
    const results = new Map([['search_text', ['pkg/a.ts:12: export function createAgent(']]])
    const reply = scriptedReply(request({ tools: ['read_file'], system: 'explore', turn: 1, results }))
    expect(reply.blocks[1]).toEqual({
      toolUse: {
        id: 'toolu_explore_1_0',
        name: 'read_file',
        input: { path: 'pkg/a.ts', offset: 12, limit: 3 },
      },
    })
  })

  test('counting stalls after its first block', () => {
    expect(scriptedReply(request({ prompt: 'count to ten' })).stallAfter).toBe(1)
  })

  test('any other prompt gets the note of what the scripted model can do', () => {
    const reply = scriptedReply(request({ prompt: 'hello' }))
    const text = (reply.blocks[0] as { text: string }).text
    expect(text).toContain('scripted offline model')
    // One list of what to ask: no blank line between its items (markdown would make it a loose list).
    const items = text.split('\n').filter((line) => line.startsWith('- '))
    expect(items).toHaveLength(3)
    expect(text).toContain(items.join('\n'))
  })
})

describe('anthropicStream', () => {
  test('a stalled stream stops at a frame boundary before the stalled block', () => {
    const stream = anthropicStream([{ text: 'a' }, { text: 'b' }], {
      id: 'm',
      model: 'x',
      inputTokens: 1,
      stallAfter: 1,
    })
    expect(stream.stallAfterBytes).toBe(Buffer.byteLength(stream.frames.join('')))
    expect(stream.frames.join('')).not.toContain('message_stop')
  })
})

describe('startScriptedModel', () => {
  let model: ScriptedModel
  beforeAll(async () => {
    model = await startScriptedModel()
  })
  afterAll(() => model.close())

  test('answers an anthropic client over HTTP with thinking, text and parallel tool calls', async () => {
    const client = createClient({ api: model.api, model: model.model, baseUrl: model.url })
    const message = await client.complete({
      messages: [{ role: 'user', id: 'u1', createdAt: 0, parts: [{ type: 'text', text: DEMO_PROMPT }] }],
      tools: MAIN_TOOLS.map((name) => ({ name, description: name, parameters: { type: 'object' } })),
    })
    expect(message.parts.map((p) => p.type)).toEqual([
      'thinking_text',
      'thinking_signature',
      'text',
      'tool_call',
      'tool_call',
      'tool_call',
    ])
    expect(message.stopReason).toBe('tool_use')
    expect(message.usage?.inputTokens).toBeGreaterThan(0)
  })
})
