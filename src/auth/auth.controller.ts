import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Req,
  UseGuards,
} from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { BodyTypes } from '@/http/input/body-types';
import type { Request } from 'express';
import { toTokenRecord, toTokenResponse } from '@/auth/auth.mapper';
import { CurrentCaller, LoginRoute } from '@/http/access/access.decorators';
import { AuthService } from '@/auth/auth.service';
import type { Caller } from '@/core/caller';
import { ChangePasswordDto } from '@/auth/dto/change-password.dto';
import { CreateTokenDto } from '@/auth/dto/create-token.dto';
import { LoginFormDto } from '@/auth/dto/login-form.dto';
import { LoginGuard, LoginUser } from '@/auth/login.guard';
import type { User } from '@/database/tables/users.entity';
import { TokenRecordDto, TokenResponseDto } from '@/auth/dto/token-response.dto';
import { ApiEmpty, ApiErrors, ApiJson, ApiProjectPath, ApiToken } from '@/openapi/decorators';
import { BODY_ERRORS, COMMON_ERRORS } from '@/openapi/common-schemas';
import { clientAddress } from '@/http/request/client-address';
import { CURRENT } from '@/http/routes';
import { ValidateDtos } from '@/http/input/validation';
import { toUserJson } from '@/users/users.mapper';

@ApiTags('authentication')
@ApiProjectPath()
@ApiErrors(...COMMON_ERRORS)
@ValidateDtos()
@Controller(CURRENT)
export class AuthController {
  constructor(private readonly auth: AuthService) {}

  /** OAuth 2.0 password flow: a login token that lives for TOKEN_EXPIRE_MINUTES. */
  @LoginRoute()
  @Post('login')
  @HttpCode(200)
  @UseGuards(LoginGuard)
  @BodyTypes('application/x-www-form-urlencoded', 'multipart/form-data')
  @ApiBody({ type: LoginFormDto })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiErrors(...BODY_ERRORS, 429)
  async login(@LoginUser() user: User, @Req() request: Request): Promise<TokenResponseDto> {
    return toTokenResponse(await this.auth.login(user, clientAddress(request)));
  }

  /** Changes the caller's password. Empty body. */
  @ApiToken()
  @Put('change-password')
  @HttpCode(200)
  @ApiEmpty('Changed')
  @ApiErrors(...BODY_ERRORS)
  async changePassword(
    @CurrentCaller() caller: Caller,
    @Body() body: ChangePasswordDto,
  ): Promise<void> {
    await this.auth.changePassword(caller, body.old_password, body.new_password);
  }

  /** The caller's named tokens (temporary and login tokens are not listed). */
  @ApiToken()
  @Get('tokens')
  @ApiOkResponse({ type: [TokenRecordDto] })
  async tokens(@CurrentCaller() caller: Caller): Promise<TokenRecordDto[]> {
    const tokens = await this.auth.listTokens(caller);
    return tokens.map((token) => toTokenRecord(token, caller.username as string));
  }

  /** A named token (with `title`) or a temporary one (without). */
  @ApiToken()
  @Post('tokens')
  @HttpCode(200)
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiErrors(...BODY_ERRORS)
  async createToken(
    @CurrentCaller() caller: Caller,
    @Body() body: CreateTokenDto,
  ): Promise<TokenResponseDto> {
    return toTokenResponse(
      await this.auth.createToken(caller, {
        title: body.title,
        expiryMinutes: body.expiry_minutes,
      }),
    );
  }

  /** Revokes one of the caller's named tokens, at once. Empty body. */
  @ApiToken()
  @Delete('tokens/:token_id')
  @HttpCode(200)
  @ApiEmpty('Revoked')
  @ApiErrors(...BODY_ERRORS)
  async revokeToken(
    @CurrentCaller() caller: Caller,
    @Param('token_id') tokenId: string,
  ): Promise<void> {
    await this.auth.revokeToken(caller, tokenId);
  }

  /** The caller: `username`, `is_admin` and the project's user fields. */
  @ApiToken()
  @Get('me')
  @ApiJson('User', 'The caller')
  async me(@CurrentCaller() caller: Caller): Promise<Record<string, unknown>> {
    const user = await this.auth.me(caller);
    return toUserJson(user, caller.fields);
  }
}
