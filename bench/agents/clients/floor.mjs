// The floor: an agent loop with no library. fetch, a minimal SSE reader, JSON.parse of every
// payload, the tools run in parallel, the whole history re-sent each turn; nothing else (no
// events, no validation, no persistence). Any loop's cost above it is that loop's own work.
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

const TOOL_DECLARATIONS = TOOLS.map((tool) => ({ type: 'function', function: tool }))

/** Reads one streamed response: its text and its tool calls (id, name, argument text). */
async function readResponse(body) {
  const decoder = new TextDecoder()
  let buffered = ''
  let text = ''
  const calls = []
  const onData = (data) => {
    if (data === '[DONE]') return
    const delta = JSON.parse(data).choices[0]?.delta
    if (!delta) return
    if (delta.content) text += delta.content
    for (const call of delta.tool_calls ?? []) {
      if (call.id) calls[call.index] = { id: call.id, name: call.function.name, json: '' }
      if (call.function?.arguments) calls[call.index].json += call.function.arguments
    }
  }
  for await (const bytes of body) {
    buffered += decoder.decode(bytes, { stream: true })
    let end = buffered.indexOf('\n\n')
    while (end !== -1) {
      const event = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      if (event.startsWith('data: ')) onData(event.slice(6))
      end = buffered.indexOf('\n\n')
    }
  }
  return { text, calls: calls.filter(Boolean) }
}

/** The task's tools by name, each recording its call before it runs. */
export function floorTools({ record, runTool, keyOf }) {
  const tools = {}
  for (const tool of TOOLS) {
    tools[tool.name] = async (args) => {
      record(keyOf(args))
      return runTool(tool.name, args)
    }
  }
  return tools
}

/** Sends one turn's request with the whole history: resolves to the streamed response's body. */
export async function requestTurn(url, messages) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body: JSON.stringify({ model: 'gpt-4.1', stream: true, messages, tools: TOOL_DECLARATIONS }),
  })
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}: ${await response.text()}`)
  return response.body
}

/** The assistant message that asked for `calls`, as Chat Completions takes it back. */
export function assistantMessage(text, calls) {
  return {
    role: 'assistant',
    content: text,
    tool_calls: calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.json },
    })),
  }
}

/** Prepares the task: resolves to the function that runs it. */
export async function prepare(setup) {
  const url = `${setup.origin}/v1/chat/completions`
  const tools = floorTools(setup)
  return async () => {
    const messages = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: PROMPT },
    ]
    for (let turn = 1; turn <= setup.maxTurns; turn++) {
      const { text, calls } = await readResponse(await requestTurn(url, messages))
      if (calls.length === 0) return { finalText: text }
      messages.push(assistantMessage(text, calls))
      const results = await Promise.all(calls.map((call) => tools[call.name](JSON.parse(call.json))))
      for (const [i, call] of calls.entries()) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: results[i] })
      }
    }
    throw new Error(`no answer within ${setup.maxTurns} turns`)
  }
}
