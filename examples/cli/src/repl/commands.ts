import { join } from 'node:path'
import { forkSession } from '@kode/session'
import { toolLines } from '../mcp.js'
import { exportSession, findSession, matchPrefix, promptLines, sessionLines } from '../sessions.js'
import type { Repl, ReplEnd } from './repl.js'

interface SlashCommand {
  usage: string
  help: string
  /** `args`: the words after the command; `rest`: the text after it as typed (a path with spaces). */
  run(repl: Repl, args: string[], rest: string): Promise<ReplEnd>
}

const COMMANDS: Record<string, SlashCommand> = {
  sessions: {
    usage: '/sessions',
    help: 'list stored sessions, newest first (* is the current one)',
    async run(repl) {
      const { sessions, unreadable } = await repl.app.listSessions()
      if (sessions.length === 0 && unreadable.length === 0) repl.print('No stored sessions yet.')
      const columns = Math.min(120, repl.columns)
      for (const line of sessionLines(sessions.slice(0, 30), repl.agent.sessionId, columns)) repl.print(line)
      // Left out of the list by the store: named, so a corrupt file is not a session gone missing.
      for (const { id, reason } of unreadable)
        repl.print(`  ${id}  cannot be read: ${reason}`, repl.style.yellow)
      return undefined
    },
  },
  resume: {
    usage: '/resume <id>',
    help: 'continue a stored session (an unambiguous prefix of its id is enough)',
    async run(repl, [prefix]) {
      if (!prefix) throw new Error('usage: /resume <id>')
      return repl.switchTo(await findSession(repl.app, prefix))
    },
  },
  history: {
    usage: '/history',
    help: "this session's prompts with their record ids (for /fork before <id>)",
    async run(repl) {
      const lines = promptLines(await repl.agent.history())
      if (lines.length === 0) repl.print('No prompts in this session yet.')
      for (const line of lines) repl.print(line)
      return undefined
    },
  },
  fork: {
    usage: '/fork [before] [id]',
    help:
      'copy this session into a new one and continue there: all of it; up to and including record <id>; ' +
      'or with before, everything before <id> (fork before a prompt from /history to ask it anew)',
    async run(repl, args) {
      const before = args[0] === 'before'
      const prefix = before ? args[1] : args[0]
      if (before && !prefix) throw new Error('usage: /fork before <id> (the ids of prompts: /history)')
      // A new session is stored with its first task: before that, the store knows no such id.
      if (!(await repl.app.store.info(repl.agent.sessionId)))
        throw new Error('nothing to fork yet: run a task first')
      const history = await repl.agent.history()
      const ids = history.map((event) => event.id)
      const matched = prefix ? matchPrefix(prefix, ids, 'record') : undefined
      let at = matched
      if (before && matched !== undefined) {
        const index = ids.indexOf(matched)
        if (index === 0) throw new Error('nothing comes before the first record: start a new session instead')
        at = ids[index - 1]
      }
      const fork = await forkSession(repl.app.store, repl.agent.sessionId, at)
      repl.print(`Forked into ${fork.id}${before ? `, before ${matched}` : ''}.`)
      const last = history[at === undefined ? history.length - 1 : ids.indexOf(at)]
      if (!before && last && 'role' in last && last.role === 'user') {
        repl.print(
          `The fork ends on that prompt, unanswered: your next message follows it. /fork before ${last.id} leaves it out.`,
          repl.style.dim,
        )
      }
      return repl.switchTo(fork.id)
    },
  },
  export: {
    usage: '/export [file]',
    help: 'write this session as a self-contained HTML file',
    async run(repl, _args, file) {
      const sessionId = repl.agent.sessionId
      if (!(await repl.app.store.info(sessionId))) throw new Error('nothing to export yet: run a task first')
      const path = file || join(repl.app.exportsDir, `${sessionId}.html`)
      // The default file may be a link a project shipped; a file the user names is theirs.
      const exported = await exportSession(repl.app.store, sessionId, path, { followLink: Boolean(file) })
      repl.print(`Exported to ${exported}`)
      return undefined
    },
  },
  model: {
    usage: '/model <api>:<model>',
    help: 'talk to another model from the next call on (e.g. /model openai-responses:gpt-5-mini)',
    async run(repl, [spec]) {
      const match = spec ? /^([^:]+):(.+)$/.exec(spec) : null
      if (!match) throw new Error('usage: /model <api>:<model>')
      const model = await repl.app.switchModel({ api: match[1]!, model: match[2]! })
      repl.agent.setClient(model.client)
      repl.print(`Now talking to ${model.label}.`)
      return undefined
    },
  },
  tools: {
    usage: '/tools',
    help: "the tools the agent has: built-in ones and each MCP server's",
    async run(repl) {
      for (const line of toolLines(repl.app.builtinTools, repl.app.mcp)) repl.print(line)
      return undefined
    },
  },
  help: {
    usage: '/help',
    help: 'this list',
    async run(repl) {
      for (const command of Object.values(COMMANDS)) repl.print(`${command.usage.padEnd(24)}${command.help}`)
      repl.print('Ids may be shortened to an unambiguous prefix.', repl.style.dim)
      return undefined
    },
  },
  exit: {
    usage: '/exit',
    help: 'leave (Ctrl-C twice or Ctrl-D do too)',
    run: async () => 'exit',
  },
}

/**
 * Runs a `/command`; errors are printed, never thrown, so the REPL goes on. Resolves how the
 * command left the REPL: `/exit`, or a second Ctrl-C during a task `/resume` or `/fork` carried on.
 */
export async function runSlashCommand(repl: Repl, line: string): Promise<ReplEnd> {
  const [name = '', ...args] = line.slice(1).split(/\s+/)
  const rest = line.slice(1 + name.length).trim()
  const command = COMMANDS[name]
  if (!command) {
    repl.print(`Unknown command /${name}. /help lists them.`, repl.style.red)
    return undefined
  }
  try {
    return await command.run(repl, args, rest)
  } catch (error) {
    repl.print(`✗ ${(error as Error).message}`, repl.style.red)
    return undefined
  }
}
