import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CreateEmbedTokenDto } from '@/embedding/dto/create-embed-token.dto';
import { EmbeddingService } from '@/embedding/embedding.service';
import type { AdminCaller } from '@/core/caller';
import { formatTimestamp } from '@/core/timestamps';
import { AdminOnly, CurrentAdmin } from '@/http/access/access.decorators';
import { BodyTypes } from '@/http/input/body-types';
import { ValidateDtos } from '@/http/input/validation';
import { CURRENT } from '@/http/routes';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { ApiEmpty, ApiErrors, ApiJson, ApiProjectPath, ApiToken } from '@/openapi/decorators';

/** Embedding tokens, issued and revoked by administrators (docs/embedding.md). */
@ApiTags('embedding')
@ApiProjectPath()
@ApiToken()
@AdminOnly()
@ApiErrors(...COMMON_ERRORS, 403)
@Controller(CURRENT)
export class EmbeddingController {
  constructor(private readonly embeds: EmbeddingService) {}

  /**
   * A short-lived token that opens one dataset or dashboard and nothing else: `params` are locked (a
   * request may not change them), `defaults` fill what a request leaves out, `user` holds the user fields
   * the project's SQL reads. A browser sends it as a bearer token, or as `x_embed_token` in a GET's query
   * (an iframe's `src`).
   */
  @Post('embed-tokens')
  @HttpCode(201)
  @BodyTypes('application/json')
  @ApiJson('EmbedToken', 'The token and its id, for revocation')
  @ApiErrors(...BODY_ERRORS)
  @ValidateDtos()
  async issue(
    @CurrentAdmin() admin: AdminCaller,
    @Body() body: CreateEmbedTokenDto,
  ): Promise<Record<string, unknown>> {
    const issued = await this.embeds.issue(admin, body);
    return {
      token: issued.token,
      id: issued.id,
      expires_at: formatTimestamp(issued.expiresAt),
      resource: { [issued.kind]: issued.name },
    };
  }

  /** Revokes the embedding token with this id (`jti`), Drey's or a host application's, on every process. */
  @Delete('embed-tokens/:id')
  @HttpCode(200)
  @ApiEmpty('Revoked')
  @ApiErrors(...BODY_ERRORS)
  async revoke(@CurrentAdmin() admin: AdminCaller, @Param('id') id: string): Promise<void> {
    await this.embeds.revoke(admin, id);
  }
}
