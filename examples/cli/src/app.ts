import { homedir } from 'node:os'
import { type Agent, createAgent, type Tool } from '@kode/core'
import type { SessionStore } from '@kode/session'
import type { CliArgs } from './args.js'
import { type KodeConfig, loadCliConfig } from './config.js'
import { clip } from './display/format.js'
import { connectServers, type McpServers } from './mcp.js'
import {
  API_KEY_ENV,
  type ConnectedModel,
  connectModel,
  MissingKeyError,
  type ProviderChoice,
  ProviderChoiceError,
  type ResolvedProvider,
  resolveProvider,
  switchChoice,
} from './provider.js'
import { openSessionShelf, resumeCommand, type SessionListing } from './sessions.js'
import { chooseSessionsDir, exportsDirOf } from './sessions-location.js'
import { storeWarningReporter } from './store-warnings.js'
import { builtinTools } from './tools/index.js'
import { openWorkspace, type Workspace } from './tools/workspace.js'

/** What every mode shares: the workspace, the store, the tools and the model. */
export interface App {
  readonly cwd: string
  readonly workspace: Workspace
  readonly store: SessionStore
  /** The sessions a user can resume, and those that could not be read (see `openSessionShelf`). */
  listSessions(): Promise<SessionListing>
  /** The tools agents get: the built-in ones, then the MCP servers' (current: their lists may change). */
  readonly tools: readonly Tool[]
  /** The built-in tools alone. */
  readonly builtinTools: readonly Tool[]
  /** The configured MCP servers (connected or not); absent when none are configured. */
  readonly mcp?: McpServers
  readonly system: string
  readonly config: KodeConfig
  /**
   * What to tell the user at start: settings of an untrusted project's config that were ignored,
   * MCP servers that did not connect.
   */
  readonly notices: readonly string[]
  /** Finished thinking: collapsed to a header line or shown whole (`--thinking`, else the config). */
  readonly thinking: 'collapse' | 'expand'
  readonly sessionsDir: string
  /** `--yes`: calls of tools that ask for approval (write_file, edit_file, bash) run without asking. */
  readonly yes: boolean
  /** The command that continues a session from here (see `resumeCommand`). */
  resumeCommand(sessionId: string): string
  /** Where `/export` and the demo write HTML: `exports/` beside the sessions directory. */
  readonly exportsDir: string
  /** The model talked to now (`/model` replaces it). */
  model: ConnectedModel
  /** An agent on this session (a new one when absent). */
  agent(sessionId?: string): Agent
  /**
   * Connects another real model over the one in use (see `switchChoice`: another api starts from
   * its own endpoint and key); throws without its key. The previous one stays open until `close`.
   */
  switchModel(choice: ProviderChoice): Promise<ConnectedModel>
  /** Names a new session after its first prompt. */
  titleSession(sessionId: string, prompt: string): Promise<void>
  close(): Promise<void>
}

/** How the app is started: the parsed flags, the environment, the working directory. */
export interface AppInit {
  args: CliArgs
  env: NodeJS.ProcessEnv
  cwd: string
  /** Pause between writes of the scripted model's responses (the demo slows it to be watchable). */
  scriptedDelayMs?: number
  /** Tells the user what the session store ignored or repaired, one line each (see `store-warnings.ts`). */
  warn?: (line: string) => void
}

/**
 * The system prompt of the main agent; `changes: false` for an agent without the tools that
 * change files and run commands.
 */
export function systemPrompt(cwd: string, { changes = true }: { changes?: boolean } = {}): string {
  return [
    `You are kode, a coding assistant working in ${cwd}.`,
    'Use the tools to look at files instead of guessing their contents; paths are relative to that directory.',
    ...(changes
      ? [
          'Change files with edit_file (or write_file for new files) and run commands with bash; the user approves each call, and a denied call says why.',
        ]
      : []),
    'Keep a todo list with todo_write for work of three or more steps.',
    'Hand open-ended searches of the codebase to the explore sub-agent.',
    'Answer in concise markdown.',
  ].join('\n')
}

/** Reads the config, picks the model and opens the workspace and the session store. */
export async function openApp(init: AppInit): Promise<App> {
  const { args, env, cwd } = init
  const { config, notices, trusted, userFile } = await loadCliConfig(cwd, {
    home: env.HOME || homedir(),
    xdgConfigHome: env.XDG_CONFIG_HOME,
    trustFlag: args.trustProject,
  })
  const choice: ProviderChoice = {
    ...config,
    ...definedOnly({ api: args.api, model: args.model, baseUrl: args.baseUrl, reasoning: args.reasoning }),
    scripted: args.scripted,
  }
  // Before anything is started or written: an untrusted project's links may refuse the default.
  const sessionsDir = await chooseSessionsDir(cwd, {
    flag: args.sessionsDir,
    configured: config.sessionsDir,
    trusted,
    userFile,
  })
  const connect = (resolved: ResolvedProvider, next: ProviderChoice) =>
    connectModel(resolved, { reasoning: next.reasoning, chunkDelayMs: init.scriptedDelayMs })
  const workspace = await openWorkspace(cwd)
  const { store, listSessions } = openSessionShelf(sessionsDir, storeWarningReporter(init.warn ?? (() => {})))
  const builtin = builtinTools(workspace, { env: withoutKeys(env, config.apiKeyEnv) })
  const system = systemPrompt(workspace.root)
  const first = resolveProvider(choice, env)
  const opened: ConnectedModel[] = [await connect(first, choice)]
  const mcp = config.mcpServers ? await connectServers(config.mcpServers, workspace.root) : undefined
  const tools = () => [...builtin, ...(mcp?.tools() ?? [])]
  const startNotices = [
    ...notices,
    ...(mcp?.servers ?? []).flatMap((s) =>
      s.error ? [`MCP server ${s.name} not connected: ${s.error}`] : [],
    ),
  ]
  // What `/model` builds on: the choice in use and its api.
  let current = { choice, api: first.kind === 'real' ? first.api : undefined }
  const app: App = {
    cwd: workspace.root,
    workspace,
    store,
    listSessions,
    get tools() {
      return tools()
    },
    builtinTools: builtin,
    ...(mcp ? { mcp } : {}),
    notices: startNotices,
    system,
    config,
    thinking: args.thinking ?? config.thinking ?? 'collapse',
    sessionsDir,
    yes: args.yes,
    // `--sessions-dir` is named in the command; a config file's sessionsDir is read again there.
    resumeCommand: (sessionId) =>
      resumeCommand(sessionId, args.sessionsDir === undefined ? undefined : sessionsDir),
    exportsDir: exportsDirOf(sessionsDir),
    model: opened[0]!,
    agent: (sessionId) => {
      const agent = createAgent({
        client: app.model.client,
        store,
        tools: tools(),
        system,
        ...(sessionId ? { sessionId } : {}),
      })
      mcp?.follow(agent, tools)
      return agent
    },
    async switchModel(next) {
      const merged = switchChoice(current.choice, current.api, next)
      let resolved: ResolvedProvider
      try {
        resolved = resolveProvider(merged, env)
      } catch (error) {
        // `--scripted` is no help in a REPL already running, and the key is read only at start.
        if (!(error instanceof MissingKeyError)) throw error
        throw new MissingKeyError(
          error.keyEnv,
          error.chosen,
          ' and start kode again (it reads keys when it starts), or switch to a model whose key is set',
        )
      }
      if (resolved.kind === 'scripted') throw new ProviderChoiceError(`cannot switch: ${resolved.why}`)
      const model = await connect(resolved, merged)
      current = { choice: merged, api: resolved.api }
      opened.push(model)
      app.model = model
      return model
    },
    async titleSession(sessionId, prompt) {
      const info = await store.info(sessionId)
      if (info && info.title === undefined) await store.update(sessionId, { title: clip(prompt, 60) })
    },
    async close() {
      await store.close()
      await Promise.all([...opened.map((model) => model.close()), mcp?.close()])
    },
  }
  return app
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>
}

/**
 * The environment `bash` commands get: the CLI's own without the API key variables, so a command
 * (or a model that asks to run `env`) never sees, prints or persists a key.
 */
export function withoutKeys(env: NodeJS.ProcessEnv, apiKeyEnv: string | undefined): NodeJS.ProcessEnv {
  const keys = new Set([...Object.values(API_KEY_ENV), ...(apiKeyEnv === undefined ? [] : [apiKeyEnv])])
  return Object.fromEntries(Object.entries(env).filter(([name]) => !keys.has(name)))
}
