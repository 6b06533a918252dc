// The Vercel AI SDK's tool loop: `streamText` with executable tools and a step limit over
// `@ai-sdk/openai`'s chat model; `fullStream` consumed.
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

/** Prepares the task: resolves to the function that runs it. */
export async function prepare({ origin, record, runTool, keyOf, maxTurns }) {
  const { jsonSchema, stepCountIs, streamText, tool } = await import('ai')
  const { createOpenAI } = await import('@ai-sdk/openai')
  // Warnings about unsupported settings would only add console output to the measurement.
  globalThis.AI_SDK_LOG_WARNINGS = false
  const model = createOpenAI({ baseURL: `${origin}/v1`, apiKey: 'bench' }).chat('gpt-4.1')
  const tools = {}
  for (const spec of TOOLS) {
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema(spec.parameters),
      execute: async (args) => {
        record(keyOf(args))
        return runTool(spec.name, args)
      },
    })
  }
  return async () => {
    const result = streamText({
      model,
      system: SYSTEM,
      prompt: PROMPT,
      tools,
      stopWhen: stepCountIs(maxTurns),
      maxRetries: 0,
    })
    let events = 0
    for await (const part of result.fullStream) {
      events++
      if (part.type === 'error' || part.type === 'tool-error') throw part.error
    }
    return { finalText: await result.text, events }
  }
}
