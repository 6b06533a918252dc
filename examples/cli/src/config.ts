import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { baseUrlProblem } from './base-url.js'
import { isProjectTrusted, type ProjectTrust, trustProjectConfig } from './project-trust.js'

const StringMap = Type.Record(Type.String(), Type.String())

/**
 * An MCP server, in the shape Claude Desktop and Cursor use: a command to start (stdio), or a url
 * (streamable HTTP, falling back to HTTP+SSE).
 */
export const McpServerConfig = Type.Union([
  Type.Object(
    {
      command: Type.String({ minLength: 1 }),
      args: Type.Optional(Type.Array(Type.String())),
      env: Type.Optional(StringMap),
      cwd: Type.Optional(Type.String({ minLength: 1 })),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { url: Type.String({ minLength: 1 }), headers: Type.Optional(StringMap) },
    { additionalProperties: false },
  ),
])
export type McpServerConfig = Static<typeof McpServerConfig>

/** An MCP server's name: the start of its tools' names (`<server>__<tool>`). */
const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/

/** The config file's schema. Every field is optional; flags override the file. */
export const KodeConfig = Type.Object(
  {
    /** The wire api: anthropic, openai-responses, openai-chat, google, openrouter. */
    api: Type.Optional(Type.String({ minLength: 1 })),
    /** The model id as the provider names it. */
    model: Type.Optional(Type.String({ minLength: 1 })),
    /** Replaces the api root (a local or compatible server). */
    baseUrl: Type.Optional(Type.String({ minLength: 1 })),
    /** The environment variable holding the key, when it is not the api's usual one. */
    apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' })),
    /** Where sessions are stored, relative to the working directory. Default `.kode/sessions`. */
    sessionsDir: Type.Optional(Type.String({ minLength: 1 })),
    /** Ask the model to reason at this effort. Default: not asked. */
    reasoning: Type.Optional(
      Type.Union([
        Type.Literal('minimal'),
        Type.Literal('low'),
        Type.Literal('medium'),
        Type.Literal('high'),
      ]),
    ),
    /** Thinking, once it ends: collapsed to a header line (default) or shown whole. */
    thinking: Type.Optional(Type.Union([Type.Literal('collapse'), Type.Literal('expand')])),
    /**
     * Project directories whose `kode.config.json` may decide where API keys go (`baseUrl`,
     * `apiKeyEnv`, a `sessionsDir` outside the project) and whose links may lead the sessions out
     * of it. Read from the user's config file only.
     */
    trustedProjects: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /**
     * MCP servers whose tools the agent gets, by name. A project's file may add servers only once
     * the user trusts the project: a server is a program started on the user's machine.
     */
    mcpServers: Type.Optional(
      // A pattern of keys alone only types the keys that match it: the others must be refused.
      Type.Record(Type.String({ pattern: SERVER_NAME.source }), McpServerConfig, {
        additionalProperties: false,
      }),
    ),
  },
  { additionalProperties: false },
)
export type KodeConfig = Static<typeof KodeConfig>

/** A config file that cannot be used; the message names the file and what is wrong. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

/** The config files read, lowest precedence first: the user's, then the project's. */
export function configPaths(cwd: string, home = homedir(), xdgConfigHome?: string): string[] {
  return [join(xdgConfigHome || join(home, '.config'), 'kode', 'config.json'), join(cwd, 'kode.config.json')]
}

/** The config the CLI runs with, and what it said about the files. */
export interface LoadedConfig {
  config: KodeConfig
  /** The files read, in order. */
  files: string[]
  /** Settings of the project's file that were ignored, and why (printed at start). */
  notices: string[]
  /** The user trusts the project in the working directory (with a config file of its own or not). */
  trusted: boolean
  /** The user's config file (read or not): where `trustedProjects` goes. */
  userFile: string
}

/**
 * Reads the user's config file, then the project's (`kode.config.json` in `cwd`). The project's
 * file is the working directory's: anyone who can put a file in a repository writes it. Until the
 * user trusts the project (`trust.flag`, `--trust-project`, or its directory in the user file's
 * `trustedProjects`), it may not change where API keys go: see `trustProjectConfig`.
 */
export async function loadCliConfig(
  cwd: string,
  options: { home?: string; xdgConfigHome?: string | undefined; trustFlag?: boolean } = {},
): Promise<LoadedConfig> {
  const [userPath, projectPath] = configPaths(cwd, options.home, options.xdgConfigHome)
  const files: string[] = []
  const user = await readConfigFile(userPath!)
  if (user) files.push(userPath!)
  const trust: ProjectTrust = {
    flag: options.trustFlag ?? false,
    trustedProjects: user?.trustedProjects ?? [],
  }
  // A project without a config file still decides where its links lead (see `chooseSessionsDir`).
  const trusted = await isProjectTrusted(cwd, trust)
  const project = await readConfigFile(projectPath!)
  if (!project) return { config: user ?? {}, files, notices: [], trusted, userFile: userPath! }
  files.push(projectPath!)
  const { config, notices } = await trustProjectConfig(user ?? {}, project, {
    cwd,
    file: projectPath!,
    userFile: userPath!,
    trust,
  })
  return { config, files, notices, trusted, userFile: userPath! }
}

async function readConfigFile(path: string): Promise<KodeConfig | undefined> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw new ConfigError(`cannot read ${path}: ${error.message}`, { cause: error })
  })
  return text === undefined ? undefined : parseConfig(text, path)
}

/** Reads the config files that exist and merges them, later files winning field by field (no trust rules). */
export async function loadConfig(paths: readonly string[]): Promise<{ config: KodeConfig; files: string[] }> {
  let config: KodeConfig = {}
  const files: string[] = []
  for (const path of paths) {
    const read = await readConfigFile(path)
    if (read === undefined) continue
    config = { ...config, ...read }
    files.push(path)
  }
  return { config, files }
}

/** Parses and checks one config file's text. */
export function parseConfig(text: string, path: string): KodeConfig {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    // JSON.parse quotes the text around the mistake, which may be a token (an MCP server's
    // headers): the error says where it is instead, and keeps no cause.
    throw new ConfigError(`${path} is not valid JSON${whereIn(text, (error as Error).message)}`)
  }
  if (typeof value === 'object' && value !== null && 'apiKey' in value) {
    throw new ConfigError(
      `${path}: API keys are not read from config files; set the provider's environment variable (or name it with apiKeyEnv)`,
    )
  }
  const servers = (value as { mcpServers?: unknown }).mcpServers
  if (typeof servers === 'object' && servers !== null) {
    const name = Object.keys(servers).find((key) => !SERVER_NAME.test(key))
    if (name !== undefined)
      throw new ConfigError(
        `${path}: at /mcpServers/${name}: an MCP server's name is 1-32 characters from A-Z a-z 0-9 _ -`,
      )
  }
  const problem = Value.Errors(KodeConfig, value).First()
  if (problem) throw new ConfigError(`${path}: at ${problem.path || '/'}: ${problem.message}`)
  const config = value as KodeConfig
  const baseUrl = config.baseUrl === undefined ? undefined : baseUrlProblem(config.baseUrl)
  if (baseUrl !== undefined) throw new ConfigError(`${path}: at /baseUrl: ${baseUrl}`)
  return config
}

/** Where `JSON.parse` of `text` failed, as ` (line L, column C)`, from its message; '' when it does not say. */
function whereIn(text: string, message: string): string {
  const position = jsonErrorPosition(text, message)
  if (position === undefined) return ''
  const before = text.slice(0, position).split('\n')
  return ` (line ${before.length}, column ${before.at(-1)!.length + 1})`
}

/**
 * The offset `JSON.parse`'s message points at. V8 gives `at position N`, or for an unexpected
 * token quotes up to 10 characters either side of it (`..."` when it cut before, `"...` after):
 * found again in `text`, the quote tells the offset.
 */
function jsonErrorPosition(text: string, message: string): number | undefined {
  const at = /at position (\d+)/.exec(message)
  if (at) return Number(at[1])
  if (message.startsWith('Unexpected end of JSON input')) return text.length
  const quoted = /^Unexpected token '([\s\S]+?)', (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/.exec(
    message,
  )
  if (!quoted) return undefined
  const [, token, cutBefore, context, cutAfter] = quoted
  const start = text.indexOf(context!)
  if (start < 0) return undefined
  if (cutBefore) return start + 10
  if (cutAfter) return start + context!.length - 10
  return start + context!.indexOf(token!)
}
