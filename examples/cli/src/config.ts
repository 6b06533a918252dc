import { readFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

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
     * MCP servers whose tools the agent gets, by name. Read from the user's file only: a project's
     * file must not start programs on the machine of whoever runs kode in it.
     */
    mcpServers: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' }), McpServerConfig),
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

/**
 * Reads the config files that exist and merges them, later files winning field by field.
 * `mcpServers` is taken from the first (the user's) file only; `ignored` names the files whose
 * `mcpServers` were not used.
 */
export async function loadConfig(
  paths: readonly string[],
): Promise<{ config: KodeConfig; files: string[]; ignored: string[] }> {
  let config: KodeConfig = {}
  const files: string[] = []
  const ignored: string[] = []
  for (const [index, path] of paths.entries()) {
    const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      throw new ConfigError(`cannot read ${path}: ${error.message}`, { cause: error })
    })
    if (text === undefined) continue
    const { mcpServers, ...rest } = parseConfig(text, path)
    config = { ...config, ...rest }
    if (mcpServers !== undefined && index === 0) config.mcpServers = mcpServers
    else if (mcpServers !== undefined) ignored.push(path)
    files.push(path)
  }
  return { config, files, ignored }
}

/** Parses and checks one config file's text. */
export function parseConfig(text: string, path: string): KodeConfig {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON: ${(error as Error).message}`, { cause: error })
  }
  if (typeof value === 'object' && value !== null && 'apiKey' in value) {
    throw new ConfigError(
      `${path}: API keys are not read from config files; set the provider's environment variable (or name it with apiKeyEnv)`,
    )
  }
  const problem = Value.Errors(KodeConfig, value).First()
  if (problem) throw new ConfigError(`${path}: at ${problem.path || '/'}: ${problem.message}`)
  return value as KodeConfig
}
