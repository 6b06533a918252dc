import type { ToolCallPart, ToolDefinition } from '@kode/protocol'
import { type Static, Type } from '@sinclair/typebox'
import { AgentError } from '../errors.js'
import { type CodeBlock, parseCodeBlocks } from './code-blocks.js'
import type { HistoryFormatter, ParsedAction } from './history-formatter.js'
import { answerAfter, type LabelLine, labelsOutside, scanLabels } from './labels.js'
import { type ActionHistory, type TextReading, textActionFormatter } from './text-actions.js'

/** The name of the pseudo tool CodeAct's code blocks call, `code_execution`. */
export const CODE_EXECUTION_TOOL = 'code_execution'

/** The arguments of a code block's call: its code and its fence's language. Give them to your code tool. */
export const CodeExecutionParameters = Type.Object({
  code: Type.String({ description: 'The program to run.' }),
  language: Type.Optional(Type.String({ description: 'The language, as the code fence named it.' })),
})
/** The arguments a code tool receives. */
export type CodeExecutionParameters = Static<typeof CodeExecutionParameters>

/** What {@link CodeActFormatterOptions.instructions} is given. */
export interface CodeActContext {
  /** The languages whose blocks run. */
  languages: readonly string[]
  /** The code tool (its description says where and how code runs). */
  tool: ToolDefinition
}

/** Options of {@link codeActFormatter}. */
export interface CodeActFormatterOptions {
  /** The tool that runs the code blocks; the agent must have it. Default {@link CODE_EXECUTION_TOOL}. */
  toolName?: string | undefined
  /** The fence languages whose blocks run, lower case. Blocks in others are text. Default `['python']`. */
  languages?: readonly string[] | undefined
  /**
   * How past code actions are sent: `auto` (the default) as tool calls when the requests declare
   * native tools (the agent has tools besides the code tool) and as text when they declare none;
   * or always `tool_calls` or `text`, as for ReAct.
   */
  history?: ActionHistory | undefined
  /** Replaces the default system text, which explains the format. */
  instructions?: ((context: CodeActContext) => string) | undefined
}

/**
 * CodeAct: the model acts by writing code. Every fenced block in one of `languages` is a call of
 * the code tool with `{ code, language }` (`CodeExecutionParameters`), run in order with the ids
 * `actionCallId(message.id, i)`; what the tool returns is the observation. Blocks after a
 * `Final Answer:` line or an `Observation:` line do not run; the task's answer is the text after
 * `Final Answer:` (or the whole text of a response without code). The agent's other tools stay
 * native tools. A block an interrupt cut off is left as text; a complete one is recorded with an
 * `aborted` result. Throws `AgentError` (`invalid_options`) for an empty `languages`; the agent
 * refuses to be created without the code tool.
 */
export function codeActFormatter(options: CodeActFormatterOptions = {}): HistoryFormatter {
  const toolName = options.toolName ?? CODE_EXECUTION_TOOL
  const languages = (options.languages ?? ['python']).map((language) => language.toLowerCase())
  if (languages.length === 0) {
    throw new AgentError('invalid_options', 'codeActFormatter: languages must name at least one language')
  }
  const instructions = options.instructions ?? codeActInstructions
  return textActionFormatter(
    {
      name: 'codeact',
      instructions(tools) {
        const tool = tools.find((candidate) => candidate.name === toolName)
        if (!tool) {
          throw new AgentError(
            'invalid_options',
            `codeActFormatter: the agent has no tool "${toolName}" to run code blocks (define one with CodeExecutionParameters)`,
          )
        }
        const others = tools.filter((candidate) => candidate !== tool)
        const system = instructions({ languages, tool })
        return others.length > 0 ? { system, tools: others } : { system }
      },
      read: (text, cut) => readCodeAct(text, cut, toolName, languages),
      // A half-written block is no program: it stays text.
      needsPendingPlaceholder: (action) => !action.incomplete,
      owns: (name) => name === toolName,
      render: renderCodeCall,
    },
    options.history ?? 'auto',
  )
}

function readCodeAct(
  text: string,
  cut: boolean,
  toolName: string,
  languages: readonly string[],
): TextReading {
  const blocks = parseCodeBlocks(text)
  // Labels inside code are code, not the model's own lines.
  const labels = labelsOutside(scanLabels(text), blocks)
  const observation = labels.find((line) => line.label === 'observation')?.start ?? text.length
  const answer: LabelLine | undefined = labels.find(
    (line) => line.label === 'final answer' && line.start < observation,
  )
  const end = answer?.start ?? observation
  const actions = blocks
    .filter((block) => block.start < end && languages.includes(block.language))
    .map((block) => codeAction(block, toolName, cut))
  if (actions.length > 0 || !answer) return { actions }
  return { actions, answer: answerAfter(text, answer, observation) }
}

function codeAction(block: CodeBlock, toolName: string, cut: boolean): ParsedAction {
  const action: ParsedAction = {
    name: toolName,
    argumentsJson: JSON.stringify({ code: block.code, language: block.language }),
  }
  // A block the model left open at a normal stop is complete; at an interrupt or `length` it is cut.
  if (!block.closed && cut) action.incomplete = true
  return action
}

/** A code call made natively, written as a code block. */
function renderCodeCall(call: ToolCallPart): string {
  try {
    const { code, language } = JSON.parse(call.argumentsJson) as Partial<CodeExecutionParameters>
    if (typeof code === 'string') {
      // Longer than any run of backticks in the code, so no line of it closes the block.
      let longest = 2
      for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length)
      const fence = '`'.repeat(longest + 1)
      return `${fence}${typeof language === 'string' ? language : ''}\n${code}\n${fence}`
    }
  } catch {
    // Not JSON: written as it is below.
  }
  return `Action: ${call.name}\nArgs: ${call.argumentsJson}`
}

/** The default CodeAct system text. */
export function codeActInstructions({ languages, tool }: CodeActContext): string {
  const example = languages[0]!
  return `# How you work

You work in steps, and you act by running code. In each step, either run code or give your final answer.

To run code, write your thought and one fenced code block, then stop:

Thought: what you know so far and what the code will do
\`\`\`${example}
your code
\`\`\`

How the code runs: ${tool.description}
What the code prints (and any error) comes back to you as the observation of that step; print what you need to see. Then continue with the next Thought. Never write an observation yourself.

Code blocks in ${languages.join(', ')} run; blocks in other languages are only shown.

When you can answer, write:

Thought: why you can answer now
Final Answer: your answer to the user

Code blocks after "Final Answer:" do not run.`
}
