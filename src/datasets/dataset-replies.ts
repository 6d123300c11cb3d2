import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '@/core/caller';
import { APP_CONFIG, AppConfig } from '@/config/config';
import { HttpReply, KeptBody } from '@/http/reply/http-reply';
import type { Page } from '@/cache/tiered-cache';
import { DatasetResultCache } from '@/datasets/results/dataset-result-cache';
import { pageJson, wholeJson } from '@/datasets/results/result-json';
import { etagOf, pageKey } from '@/datasets/results/result-keys';
import { etagMatches } from '@/http/reply/content-coding';
import { parseResultOptions, ResultOptions } from '@/datasets/results/result-options';
import { ResultReply, toHttp } from '@/datasets/results/result-reply';
import { exportRows } from '@/datasets/results/result-streams';
import { EXTENSIONS } from '@/engine/export/export-sql';
import {
  CONTENT_TYPES,
  ResultFormat,
  chooseCsvFormulas,
  chooseFormat,
} from '@/datasets/results/stream-formats';
import type { ParameterRequest } from '@/core/parameters/selection-request';
import { DatasetsService } from '@/datasets/datasets.service';
import { DatasetExports } from '@/datasets/dataset-exports';
import type { KeyedRead, ResultRead } from '@/datasets/result-read';

/**
 * How a result is answered: `paged` reads the request's x_* built-ins (x_orientation, x_select, x_limit,
 * x_offset shape a JSON page; x_select picks an export's columns); `whole` answers every row as records
 * with the schema's `dimensions`, within the cap of one response, and reads no built-in.
 */
export type ResultShape = 'paged' | 'whole';

/** What the request asks of the reply besides its selections. */
export interface ReplyWants {
  /** The format `Accept` asks for; undefined when it names none served here (a 406 without x_format). */
  format: ResultFormat | undefined;
  shape: ResultShape;
  /** `If-None-Match` of a GET; answered with 304 when it names the result's current ETag. */
  ifNoneMatch?: string;
  /** The client's address: whose query and export slots an anonymous caller takes. */
  address?: string;
}

/**
 * The HTTP replies of dataset results, for the controllers of both layouts (and the fast route, which runs
 * their handlers): the JSON bytes of a page, kept per page with their compressed forms (KeptBody) for the
 * next identical request, their ETag and 304, the download's file name, and the streams of exports and of
 * large pages. The rows come from the results reader (DatasetsService); a kept page is looked up first,
 * without holding the build, since the cached read is the most frequent request.
 */
@Injectable()
export class DatasetReplies {
  constructor(
    private readonly datasets: DatasetsService,
    private readonly exports: DatasetExports,
    private readonly cache: DatasetResultCache,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A dataset's result (`name` as configured): a kept response when the same request was answered on
   * this build, else a page cut from the cached result, else one query shared by every identical request
   * running at the time. A result of more than WHOLE_RESULT_ROWS rows is not kept whole: its row count
   * is, and each page is read with LIMIT/OFFSET and kept apart. CSV and NDJSON stream every row instead
   * (not cached).
   */
  async reply(
    caller: Caller,
    name: string,
    request: ParameterRequest,
    wants: ReplyWants,
  ): Promise<HttpReply> {
    // x_format wins over Accept, and names a download (Content-Disposition).
    const { format, named } = chooseFormat(request.builtins.x_format, wants.format);
    // Both layouts, whatever the format: a wrong value is a 400 wherever it is sent.
    const csvFormulas = chooseCsvFormulas(request.builtins.x_csv_formulas);
    if (format !== 'json') {
      // Every row, in the columns x_select names (decisions.md, "Results"); the legacy layout's whole
      // result reads no built-in.
      const rows = exportRows(
        wants.shape === 'paged' ? request.builtins : {},
        this.config.maxResultRows,
      );
      const read = await this.datasets.resolve(caller, name, request, wants.address);
      return toHttp({
        kind: 'stream',
        contentType: CONTENT_TYPES[format],
        filename: `${read.dataset.name}.${EXTENSIONS[format]}`,
        chunks: this.exports.chunks(read, format, rows, csvFormulas),
      });
    }
    const options = this.jsonOptions(request, wants.shape);
    const read = await this.datasets.resolve(caller, name, request, wants.address);
    const reply =
      this.keptReply(read, wants, options) ??
      (await this.datasets.withBuild(read, (keyed) => {
        const page = pageKey(keyed.keyText, wants.shape, options);
        return Promise.resolve(
          this.keptPage(keyed, page, wants.ifNoneMatch) ??
            this.freshPage(keyed, page, options, wants.ifNoneMatch),
        );
      }));
    return toHttp(
      named && reply.kind !== 'not-modified'
        ? { ...reply, filename: `${read.dataset.name}.json` }
        : reply,
    );
  }

  /** The shaping and paging built-ins of a paged result; none for a whole one (every row). */
  private jsonOptions(request: ParameterRequest, shape: ResultShape): ResultOptions | null {
    return shape === 'paged'
      ? parseResultOptions(request.builtins, this.config.maxResultRows)
      : null;
  }

  /**
   * The response kept for this request on the build being served, found without holding that build (no
   * lease, no promise): a hit runs no query, so it puts no rows under any key. Undefined on a miss, and
   * while a build another process switched in is not followed yet (then the reader's withBuild follows
   * it).
   */
  private keptReply(
    read: ResultRead,
    wants: ReplyWants,
    options: ResultOptions | null,
  ): ResultReply | undefined {
    const key = this.datasets.keyNow(read);
    if (key === undefined) return undefined;
    const page = pageKey(key.keyText, wants.shape, options);
    return this.keptPage(
      { dataset: read.dataset, cacheable: key.cacheable },
      page,
      wants.ifNoneMatch,
    );
  }

  private keptPage(
    keyed: Pick<KeyedRead, 'dataset' | 'cacheable'>,
    page: string,
    ifNoneMatch?: string,
  ): ResultReply | undefined {
    if (!keyed.cacheable) return undefined;
    const kept = this.cache.page(keyed.dataset.name, page);
    if (!kept) return undefined;
    if (etagMatches(ifNoneMatch, kept.etag)) return { kind: 'not-modified', etag: kept.etag };
    return { kind: 'body', body: kept.body, etag: kept.etag, kept: this.keptBody(page, kept) };
  }

  /** A kept page as the writer takes it: the compressed forms it makes are kept and counted with it. */
  private keptBody(pageKey: string, page: Page): KeptBody {
    return new KeptBody(page, 'body', () => this.cache.keepPage(pageKey, page));
  }

  private async freshPage(
    keyed: KeyedRead,
    page: string,
    options: ResultOptions | null,
    ifNoneMatch?: string,
  ): Promise<ResultReply> {
    // Results that may change between runs have no ETag: their next bytes may differ.
    const etag = keyed.cacheable ? etagOf(page) : undefined;
    if (etag && etagMatches(ifNoneMatch, etag)) return { kind: 'not-modified', etag };
    const json = options
      ? await this.pagedJson(keyed, options)
      : wholeJson(await this.datasets.whole(keyed));
    if (typeof json !== 'string') {
      return { kind: 'stream', contentType: CONTENT_TYPES.json, chunks: json, etag };
    }
    if (!etag) return { kind: 'body', body: json };
    const kept: Page = { body: Buffer.from(json), etag };
    this.cache.keepPage(page, kept);
    return { kind: 'body', body: kept.body, etag, kept: this.keptBody(page, kept) };
  }

  private async pagedJson(
    keyed: KeyedRead,
    options: ResultOptions,
  ): Promise<string | Iterable<string>> {
    const { run, held } = await this.datasets.page(keyed, options, options.select);
    return pageJson(run, options, held);
  }
}
