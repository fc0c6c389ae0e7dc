/** Response envelopes of the hosted API: v3 `{data, status:{code}}`, v2 adds is_success and messages. */
import { cutText } from '../../render/cut-text.js';

export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly userMessage: string,
    readonly developerMessage: string = userMessage,
  ) {
    super(userMessage);
  }
}

export const NOT_FOUND_MESSAGE = 'The requested resource was not found. Please check that you have the proper permissions.';

export const notFound = (what: string): ApiError => new ApiError(404, NOT_FOUND_MESSAGE, `${what} not found`);
/** 400 naming the field, so a person can fix the request. */
export const invalid = (field: string, problem: string): ApiError => new ApiError(400, `Invalid request: ${field} ${problem}`, `${field}: ${problem}`);

/** What a request sent, as an error message quotes it: cut, so an answer never grows with the request. */
export const echoed = (s: string, max = 200): string => (s.length > max ? `${cutText(s, max)}... (${s.length} characters)` : s);

export function errorBody(e: ApiError): unknown {
  return { data: null, status: { code: e.statusCode, is_success: false, user_message: e.userMessage, developer_message: e.developerMessage } };
}

export const v3 = (data: unknown, code = 200) => ({ data, status: { code } });
export const v2 = (data: unknown, code = 200) => ({ status: { code, is_success: true, user_message: 'Success!', developer_message: '' }, data });
/** A v2 listing: the hosted API's `extra` with the filters it applied, the order and the pagination. */
export const v2List = (data: unknown[], total: number, filters: Record<string, unknown>, orderBy: string) => ({
  ...v2(data),
  extra: { filters, order_by: orderBy, pagination: { count: data.length, total_count: total } },
});
