import { type FileHandle, open } from 'node:fs/promises'

/**
 * What platforms say when a directory cannot be opened or synced at all (Windows: `EISDIR` or
 * `EPERM`; some file systems: `EINVAL`). Nothing more can be done there portably.
 */
const UNSUPPORTED = new Set(['EISDIR', 'EPERM', 'EINVAL'])

const unsupported = (error: unknown) => UNSUPPORTED.has((error as NodeJS.ErrnoException).code ?? '')

/**
 * Syncs a directory, so the entries a rename, create or removal changed in it survive a power loss
 * (syncing the files does not make their names durable). Where the platform cannot sync a directory
 * this does nothing; any other failure (`EIO`) is thrown: the change may not be on disk.
 */
export async function syncDirectory(path: string): Promise<void> {
  let handle: FileHandle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    if (unsupported(error)) return
    throw error
  }
  try {
    await handle.sync()
  } catch (error) {
    if (!unsupported(error)) throw error
  } finally {
    await handle.close()
  }
}
