// OpenAI Agents JS: `run(agent, input, { stream: true })` with its Chat Completions model pointed
// at the local server; tracing off (it would export traces over the network); the stream consumed.
import { PROMPT, SYSTEM, TOOLS } from '../task.mjs'

/** Prepares the task: resolves to the function that runs it. */
export async function prepare({ origin, record, runTool, keyOf, maxTurns }) {
  const { Agent, OpenAIProvider, run, setTracingDisabled, tool } = await import('@openai/agents')
  const { z } = await import('zod')
  setTracingDisabled(true)
  const provider = new OpenAIProvider({ apiKey: 'bench', baseURL: `${origin}/v1`, useResponses: false })
  const model = await provider.getModel('gpt-4.1')
  const tools = TOOLS.map((spec) => {
    const [field] = Object.keys(spec.parameters.properties)
    return tool({
      name: spec.name,
      description: spec.description,
      parameters: z.object({ [field]: z.string() }),
      execute: async (args) => {
        record(keyOf(args))
        return runTool(spec.name, args)
      },
    })
  })
  const agent = new Agent({ name: 'surveyor', instructions: SYSTEM, model, tools })
  return async () => {
    const result = await run(agent, PROMPT, { stream: true, maxTurns })
    let events = 0
    for await (const _ of result) events++
    await result.completed
    if (result.error) throw result.error
    return { finalText: result.finalOutput, events }
  }
}
