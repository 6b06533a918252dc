// What the scripted model checks in every request: the history a client re-sends must hold every
// earlier turn's text, its tool calls and their exact results. A client that drops or garbles
// any of it gets an answer naming what is wrong, so its final text fails the check.
import { CALLS_PER_TURN, callsOf, runTool, textDeltas } from './task.mjs'

function textOf(content) {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('')
  return ''
}

/**
 * The turn this request asks for (1-based), or `{ problem }` when its history is not the task's.
 */
export function checkRequest(body) {
  if (body.stream !== true) return { problem: 'the request is not streamed' }
  const messages = body.messages ?? []
  const results = new Map()
  const calls = new Map()
  const texts = []
  for (const message of messages) {
    if (message.role === 'tool') results.set(message.tool_call_id, textOf(message.content))
    if (message.role === 'assistant') {
      const text = textOf(message.content)
      if (text) texts.push(text)
      for (const call of message.tool_calls ?? []) calls.set(call.id, call)
    }
  }
  if (results.size % CALLS_PER_TURN !== 0) return { problem: `${results.size} tool results` }
  const turn = results.size / CALLS_PER_TURN + 1
  for (let earlier = 1; earlier < turn; earlier++) {
    if (texts[earlier - 1] !== textDeltas(earlier).join('')) return { problem: `turn ${earlier}'s text` }
    for (const call of callsOf(earlier)) {
      const sent = calls.get(call.id)
      if (!sent || sent.function.name !== call.name) return { problem: `call ${call.id} missing` }
      if (JSON.stringify(JSON.parse(sent.function.arguments)) !== JSON.stringify(call.args))
        return { problem: `call ${call.id}'s arguments` }
      if (results.get(call.id) !== runTool(call.name, call.args)) return { problem: `result of ${call.id}` }
    }
  }
  return { turn }
}
