import { Controller, HttpCode, Post, Req, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { BodyTypes } from '@/http/input/body-types';
import type { Request } from 'express';
import { toLegacyTokenResponse } from '@/legacy/auth';
import { LoginRoute } from '@/http/access/access.decorators';
import { AuthService } from '@/auth/auth.service';
import { LegacyTokenResponseDto } from '@/auth/dto/token-response.dto';
import { LoginFormDto } from '@/auth/dto/login-form.dto';
import { LoginGuard, LoginUser } from '@/auth/login.guard';
import type { User } from '@/database/tables/users.entity';
import { ApiLegacyErrors, ApiProjectPath } from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { clientAddress } from '@/http/request/client-address';
import { LEGACY } from '@/legacy/routes';

@ApiTags('legacy')
@ApiProjectPath()
@Controller(LEGACY)
export class AuthLegacyController {
  constructor(private readonly auth: AuthService) {}

  /** Legacy login: the same token, answered without `is_admin` and with a `+00:00` expiry. */
  @LoginRoute()
  @Post('token')
  @HttpCode(200)
  @UseGuards(LoginGuard)
  @BodyTypes('application/x-www-form-urlencoded', 'multipart/form-data')
  @ApiBody({ type: LoginFormDto })
  @ApiOkResponse({ type: LegacyTokenResponseDto })
  @ApiLegacyErrors(...COMMON_ERRORS, ...BODY_ERRORS, 429)
  async token(@LoginUser() user: User, @Req() request: Request): Promise<LegacyTokenResponseDto> {
    return toLegacyTokenResponse(await this.auth.login(user, clientAddress(request)));
  }
}
