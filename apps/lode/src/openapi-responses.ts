export interface Answer {
  schema?: string;
  list?: boolean;
  status?: string;
  media?: string;
  description?: string;
}
export function responseOf(_method: string, _path: string): Answer {
  return {};
}
