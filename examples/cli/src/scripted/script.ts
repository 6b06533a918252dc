import type { ScriptedBlock } from './anthropic-stream.js'
import type { ScriptedRequest } from './request.js'

/** The task `kode demo` runs; with a real model it is sent as it is. */
export const DEMO_PROMPT =
  'Give me a short tour of this repository: read the README, list the packages, and ask the explore ' +
  'sub-agent where createAgent is defined. Keep a todo list as you go, then sum it up.'

/** What the scripted model answers to one request. */
export interface ScriptedReply {
  blocks: ScriptedBlock[]
  /** Send this many blocks, then hang until the client gives up (to show an interrupt). */
  stallAfter?: number
}

// The definition the explore sub-agent looks for: a line that starts with it (so neither this
// line nor a test that writes such a line matches when the workspace is this repository).
const DEFINITION_PATTERN = '^export function createAgent\\('

/**
 * The scripted model: a reply chosen from the request alone (who asks, the prompt, the turn, the
 * tool results so far), so a run is deterministic whatever order concurrent requests arrive in.
 *
 * - The explore sub-agent (offered no `explore` tool): searches for the definition, reads it,
 *   reports where it is.
 * - A prompt asking for a tour (the demo): four turns with parallel tool calls on real files, a
 *   todo list, the sub-agent, and a markdown summary built from what the tools returned.
 * - A prompt asking to count: starts counting, then hangs, so Ctrl-C has something to interrupt.
 * - A prompt asking to save a note, when a `save_note` tool is offered (the web example's, which
 *   needs the user's approval): calls it, then says what came back (saved, or denied).
 * - A prompt asking to ``write <path>`` or to ``run `<command>` ``: calls `write_file` or `bash`
 *   (which ask for the user's approval), then says what came back (done, refused, or denied).
 * - Anything else: a short note of what this model can do.
 */
export function scriptedReply(request: ScriptedRequest): ScriptedReply {
  if (!request.tools.includes('explore') && /\bexplore\b/.test(request.system)) return exploreTurn(request)
  if (/\btour\b/i.test(request.prompt)) return tourTurn(request)
  if (/\bcount\b/i.test(request.prompt)) return countingReply()
  if (request.tools.includes('save_note') && /\bnote\b/i.test(request.prompt)) return noteTurn(request)
  const write = /\bwrite (\S+)/i.exec(request.prompt)
  if (write && request.tools.includes('write_file'))
    return changeTurn(request, 'write_file', { path: write[1]!, content: 'Hello from kode.\n' })
  const command = /\brun `([^`]+)`/i.exec(request.prompt)
  if (command && request.tools.includes('bash')) return changeTurn(request, 'bash', { command: command[1]! })
  return { blocks: [{ text: HELP }] }
}

const HELP =
  "I am Kode's **scripted offline model**: I answer from a script, not from a real LLM.\n\n" +
  '- Ask me for *a tour of this repository* to watch tools, a sub-agent and a todo list at work.\n' +
  '- Ask me to *count* to try interrupting a response with Ctrl-C.\n' +
  '- Ask me to *write notes.txt* or to *run `ls`* to see a call wait for your approval.\n\n' +
  'Set `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`, `GEMINI_API_KEY`, `OPENROUTER_API_KEY`) to talk to a real model.'

function tourTurn(request: ScriptedRequest): ScriptedReply {
  const id = (n: number) => `toolu_tour_${request.turn}_${n}`
  switch (request.turn) {
    case 0:
      return {
        blocks: [
          {
            thinking:
              '**Planning the tour**\nThe user wants a short tour of the repository. Reading the README and ' +
              'listing packages/ do not depend on each other, so I will do both at once, and keep a todo ' +
              'list so the progress is visible.',
          },
          { text: "I'll read the README and list the packages at the same time, and track the steps." },
          { toolUse: { id: id(0), name: 'todo_write', input: { todos: todos(0) } } },
          { toolUse: { id: id(1), name: 'read_file', input: { path: 'README.md', limit: 20 } } },
          { toolUse: { id: id(2), name: 'list_dir', input: { path: 'packages' } } },
        ],
      }
    case 1:
      return {
        blocks: [
          {
            thinking:
              '**Delegating the search**\nI have the overview and the package list. Finding where createAgent ' +
              'is defined is a search: the explore sub-agent can do it with its read-only tools.',
          },
          { text: 'Next, the explore sub-agent looks for `createAgent`.' },
          { toolUse: { id: id(0), name: 'todo_write', input: { todos: todos(2) } } },
          {
            toolUse: {
              id: id(1),
              name: 'explore',
              input: {
                prompt: 'Find where the function createAgent is defined and report the file and line.',
                description: 'find createAgent',
              },
            },
          },
        ],
      }
    case 2:
      return {
        blocks: [
          { text: 'Everything on the list is done; here is the summary.' },
          { toolUse: { id: id(0), name: 'todo_write', input: { todos: todos(4) } } },
        ],
      }
    default:
      return { blocks: [{ text: tourSummary(request) }] }
  }
}

const STEPS = [
  ['Read the README', 'Reading the README'],
  ['List the packages', 'Listing the packages'],
  ['Find where createAgent is defined', 'Asking the explore sub-agent'],
  ['Sum up the tour', 'Summing up'],
] as const

/** The todo list with the first `done` steps completed and the next ones in progress. */
function todos(done: number) {
  return STEPS.map(([content, activeForm], i) => ({
    content,
    activeForm,
    status: i < done ? 'completed' : i < done + 2 && i < 3 ? 'in_progress' : 'pending',
  }))
}

function tourSummary(request: ScriptedRequest): string {
  const readme = request.results.get('read_file')?.[0] ?? ''
  const title = /^\s*1\| #\s*(.+)$/m.exec(readme)?.[1]
  const listing = request.results.get('list_dir')?.[0] ?? ''
  const packages = listing.split('\n').filter((line) => line.endsWith('/'))
  const report = request.results.get('explore')?.[0]?.split('\n')[0] ?? 'The explore sub-agent found nothing.'
  const lines = ['## A tour of this repository', '']
  lines.push(title ? `**README**: the project is **${title}**.` : '**README**: there is no README.md here.')
  lines.push('')
  if (packages.length > 0) {
    lines.push(`**Packages** (${packages.length} under \`packages/\`):`)
    for (const name of packages) lines.push(`- \`${name}\``)
  } else {
    lines.push('**Packages**: this directory has no `packages/` folder.')
  }
  lines.push('', '**Where `createAgent` lives**, as the explore sub-agent reported:', `> ${report}`, '')
  lines.push(
    'To go further:',
    '1. Run `pnpm test` for the whole suite.',
    '2. Start `kode` and ask your own questions:',
  )
  lines.push('', '```sh', 'ANTHROPIC_API_KEY=... pnpm kode', '```')
  return lines.join('\n')
}

function exploreTurn(request: ScriptedRequest): ScriptedReply {
  const id = (n: number) => `toolu_explore_${request.turn}_${n}`
  const found = /^(\S+):(\d+): (.*)$/m.exec(request.results.get('search_text')?.[0] ?? '')
  switch (request.turn) {
    case 0:
      return {
        blocks: [
          { thinking: '**Searching**\nA text search for the definition is the quickest way in.' },
          {
            toolUse: {
              id: id(0),
              name: 'search_text',
              input: { pattern: DEFINITION_PATTERN, path: '.', maxResults: 5 },
            },
          },
        ],
      }
    case 1:
      if (!found) return { blocks: [{ text: 'I could not find a definition of `createAgent` here.' }] }
      return {
        blocks: [
          { text: `Found it in ${found[1]}; reading the definition.` },
          {
            toolUse: {
              id: id(0),
              name: 'read_file',
              input: { path: found[1], offset: Number(found[2]), limit: 3 },
            },
          },
        ],
      }
    default: {
      const code = (request.results.get('read_file')?.[0] ?? '')
        .split('\n')
        .filter((line) => /^\s*\d+\| /.test(line))
        .map((line) => line.replace(/^\s*\d+\| /, ''))
      const where = found ? `\`createAgent\` is defined in ${found[1]} at line ${found[2]}.` : 'Not found.'
      return { blocks: [{ text: `${where}\n\n\`\`\`ts\n${code.join('\n')}\n\`\`\`` }] }
    }
  }
}

function countingReply(): ScriptedReply {
  return {
    blocks: [
      {
        text: 'Counting slowly. This scripted reply never finishes, so press Ctrl-C to interrupt it.\n\n1, 2, 3, ',
      },
      { text: 'never sent' },
    ],
    stallAfter: 1,
  }
}

function noteTurn(request: ScriptedRequest): ScriptedReply {
  const result = request.results.get('save_note')?.at(-1)
  if (result === undefined) {
    return {
      blocks: [
        { text: 'Saving that as a note. The tool asks for your approval first.' },
        { toolUse: { id: `toolu_note_${request.turn}`, name: 'save_note', input: { text: request.prompt } } },
      ],
    }
  }
  return { blocks: [{ text: `The note tool answered: ${result}` }] }
}

/** One call of a tool that asks for approval, then what it answered. */
function changeTurn(request: ScriptedRequest, name: string, input: Record<string, string>): ScriptedReply {
  const result = request.results.get(name)?.at(-1)
  if (result === undefined) {
    return {
      blocks: [
        { text: `Calling ${name}; it asks for your approval first.` },
        { toolUse: { id: `toolu_${name}_${request.turn}`, name, input } },
      ],
    }
  }
  return { blocks: [{ text: `${name} answered: ${result}` }] }
}
