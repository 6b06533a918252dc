import { type RecordedRequest, type ScriptedResponse, scriptedResponse } from '@kode/providers/testing'

/** The task the scripted model solves. */
export const SCRIPTED_TASK = 'What is the sum of the integers from 1 to 100? Compute it.'

/** Its first program, with a typo that makes it fail. */
export const BUGGY_PROGRAM = 'let total = 0\nfor (let i = 1; i <= 100; i++) totl += i\nconsole.log(total)'
/** Its second program, the typo fixed. */
export const FIXED_PROGRAM = 'let total = 0\nfor (let i = 1; i <= 100; i++) total += i\nconsole.log(total)'

type ChatMessage = { role: string; content?: unknown }

/**
 * A scripted model on the OpenAI Chat Completions wire, answering by the conversation so far: it
 * writes a buggy program, fixes it after reading the error, then answers with the number the fixed
 * program printed. Everything it learns comes from the real runs' observations.
 */
export function scriptedCodeActModel(request: RecordedRequest): ScriptedResponse {
  const messages = (request.body as { messages: ChatMessage[] }).messages
  const step = messages.filter((message) => message.role === 'assistant').length
  const observation = String(messages.at(-1)?.content ?? '')
  if (step === 0) return reply('step-1', `Thought: I will add the numbers in a loop.\n${js(BUGGY_PROGRAM)}`)
  if (/ReferenceError/.test(observation)) {
    return reply('step-2', `Thought: I misspelled total. Fixed:\n${js(FIXED_PROGRAM)}`)
  }
  const sum = /\d+/.exec(observation)?.[0] ?? 'unknown'
  return reply('step-3', `Thought: The program printed ${sum}.\nFinal Answer: The sum is ${sum}.`)
}

function js(code: string): string {
  return `\`\`\`javascript\n${code}\n\`\`\``
}

/** A streamed text response on the Chat Completions wire, then the finish and usage chunks. */
function reply(id: string, text: string): ScriptedResponse {
  return scriptedResponse('openai-chat', {
    id,
    steps: [{ text }],
    usage: { inputTokens: 200, outputTokens: 40 },
  })
}
