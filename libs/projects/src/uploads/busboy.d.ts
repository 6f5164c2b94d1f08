// busboy ships no types and @types/busboy is not installed: just the part of its API upload-store.ts uses.
declare module 'busboy' {
  import type { IncomingHttpHeaders } from 'node:http';
  import type { Readable, Writable } from 'node:stream';

  namespace busboy {
    interface Limits {
      fieldSize?: number;
      fields?: number;
      fileSize?: number;
      files?: number;
      parts?: number;
    }
    interface Config {
      headers: IncomingHttpHeaders;
      limits?: Limits;
      defParamCharset?: string;
      preservePath?: boolean;
    }
    interface FileInfo {
      filename: string | undefined;
      encoding: string;
      mimeType: string;
    }
    interface FileStream extends Readable {
      truncated: boolean;
    }
    interface Busboy extends Writable {
      on(event: 'file', listener: (name: string, stream: FileStream, info: FileInfo) => void): this;
      on(event: string | symbol, listener: (...args: never[]) => void): this;
    }
  }
  function busboy(config: busboy.Config): busboy.Busboy;
  export = busboy;
}
