import type { ToolDefinition } from '@kode/protocol'
import type { HistoryFormatter } from './history-formatter.js'
import { parseReAct } from './react-parse.js'
import { type ActionHistory, textActionFormatter } from './text-actions.js'

/** Options of {@link reactFormatter}. */
export interface ReActFormatterOptions {
  /**
   * How past actions are sent: `text` as written, with `Observation: ...` user messages, or
   * `tool_calls` as the provider's tool calls and results (the view a native-tools agent sends; only for APIs that
   * accept tool calls in a request that declares no tools: OpenAI does, Anthropic does not).
   * Default `auto`, which is `text` for ReAct, since its requests declare no native tools.
   */
  history?: ActionHistory | undefined
  /** Replaces the default system text, which explains the format and lists the tools. */
  instructions?: ((tools: readonly ToolDefinition[]) => string) | undefined
}

/**
 * ReAct: the model is offered no native tools. The system text lists the tools and asks for
 * `Thought:` / `Action: <tool>` / `Args: <JSON object>` to act, or `Final Answer:` to answer. The
 * engine runs the action read from each response like a native tool call, with the id
 * `actionCallId(message.id, 0)`; one action per response (the first), and anything after an
 * `Observation:` line is ignored. The task's answer is the text after `Final Answer:`. An action
 * of an interrupted response is recorded (with an `aborted` result) once its `Action:` line is
 * complete.
 */
export function reactFormatter(options: ReActFormatterOptions = {}): HistoryFormatter {
  const instructions = options.instructions ?? reactInstructions
  return textActionFormatter(
    {
      name: 'react',
      instructions: (tools) => ({ system: instructions(tools) }),
      read(text, cut) {
        const step = parseReAct(text, cut)
        return step.action ? { actions: [step.action] } : { actions: [], answer: step.answer }
      },
      needsPendingPlaceholder: () => true,
      owns: () => true,
      render: (call) => `Action: ${call.name}\nArgs: ${call.argumentsJson}`,
    },
    options.history ?? 'auto',
  )
}

/** The default ReAct system text: the format, then each tool with its JSON Schema. */
export function reactInstructions(tools: readonly ToolDefinition[]): string {
  const format = `# How you work

You work in steps. In each step you either use one tool or give your final answer.

To use a tool, write these three lines and then stop:

Thought: what you know so far and what you will do next
Action: the name of the tool
Args: the tool's arguments as one JSON object, for example {"path": "notes.txt"}

The tool's result comes back to you as the observation of that step; then continue with the next Thought. Never write an observation yourself.

When you can answer, write:

Thought: why you can answer now
Final Answer: your answer to the user`
  if (tools.length === 0) return `${format}\n\nYou have no tools: always give a final answer.`
  const list = tools.map(
    (tool) =>
      `## ${tool.name}\n\n${tool.description}\n\nArgs (JSON Schema): ${JSON.stringify(tool.parameters)}`,
  )
  return `${format}\n\nThe only way to use a tool is the Action and Args lines. The tools:\n\n${list.join('\n\n')}`
}
