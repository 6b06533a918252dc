import { resolve } from 'node:path'
import type { Agent, Tool } from '@kode/core'
import { connectMcpServer, type McpConnection, type McpServerOptions } from '@kode/mcp'
import { cutText } from '@kode/protocol/helpers'
import type { McpServerConfig } from './config.js'

/** One configured MCP server: connected, or why not. */
export type McpServerStatus =
  | { name: string; connection: McpConnection; error?: undefined }
  | { name: string; connection?: undefined; error: string }

/** The configured MCP servers of a run, and the agents that get their tools. */
export interface McpServers {
  readonly servers: readonly McpServerStatus[]
  /** Every connected server's tools, in the config's order. */
  tools(): Tool[]
  /** Keeps `agent`'s tools current when a server's list changes (`all()` builds the full list). */
  follow(agent: Agent, all: () => readonly Tool[]): void
  /** Closes every connection, stopping the servers' processes. */
  close(): Promise<void>
}

/**
 * Connects every configured server at once. One that fails does not stop kode: its error is kept
 * for `/tools` and the start-up notice, and the others work. `cwd` resolves relative `cwd`s.
 */
export async function connectServers(
  config: Readonly<Record<string, McpServerConfig>> | undefined,
  cwd: string,
): Promise<McpServers> {
  const servers = await Promise.all(
    Object.entries(config ?? {}).map(async ([name, server]): Promise<McpServerStatus> => {
      try {
        return { name, connection: await connectMcpServer(optionsOf(name, server, cwd)) }
      } catch (error) {
        return { name, error: (error as Error).message }
      }
    }),
  )
  const connections = servers.flatMap((s) => (s.connection ? [s.connection] : []))
  const followed: { agent: Agent; all: () => readonly Tool[] }[] = []
  for (const connection of connections) {
    connection.onToolsChanged(() => {
      for (const { agent, all } of followed) agent.setTools(all())
    })
  }
  return {
    servers,
    tools: () => connections.flatMap((c) => c.tools),
    follow(agent, all) {
      if (connections.length > 0) followed.push({ agent, all })
    },
    close: async () => {
      await Promise.all(connections.map((c) => c.close()))
    },
  }
}

function optionsOf(name: string, server: McpServerConfig, cwd: string): McpServerOptions {
  if ('url' in server)
    return { name, url: server.url, ...(server.headers ? { headers: server.headers } : {}) }
  return {
    name,
    command: server.command,
    ...(server.args ? { args: server.args } : {}),
    ...(server.env ? { env: server.env } : {}),
    cwd: resolve(cwd, server.cwd ?? '.'),
  }
}

/** The `/tools` listing: the built-in tools, then each server's tools or why it is missing. */
export function toolLines(builtin: readonly Tool[], mcp: McpServers | undefined): string[] {
  const line = (tool: Tool) => `  ${tool.name.padEnd(36)}${firstLine(tool.description)}`
  const lines = ['Built-in tools:', ...builtin.map(line)]
  for (const server of mcp?.servers ?? []) {
    if (server.connection) {
      const { tools, transport } = server.connection
      lines.push(`MCP server ${server.name} (${transport}, ${tools.length} tools):`, ...tools.map(line))
    } else lines.push(`MCP server ${server.name}: not connected: ${server.error}`)
  }
  return lines
}

function firstLine(text: string): string {
  const first = text.split('\n')[0] ?? ''
  return cutText(first, 70)
}
