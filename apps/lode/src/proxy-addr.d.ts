// proxy-addr (Express's own, as `req.ip` uses it) ships no types and @types/proxy-addr is not
// installed: just the call http-app.ts makes.
declare module 'proxy-addr' {
  import type { IncomingMessage } from 'node:http';

  function proxyAddr(req: IncomingMessage, trust: (address: string, hop: number) => boolean): string;
  export = proxyAddr;
}
