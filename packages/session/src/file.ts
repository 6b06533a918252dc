/**
 * @kode/session/file: the file store, the embedded default for Node hosts (Bun and Deno run it
 * too). It lives on its own entry because it needs `node:fs`; the main entry runs anywhere.
 */
export {
  createFileSessionStore,
  FILE_READ_BATCH_SIZE,
  type FileSessionStoreOptions,
} from './store/file/file-store.js'
