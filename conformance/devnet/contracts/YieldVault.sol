// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ERC4626} from "@openzeppelin/contracts/token/ERC20/extensions/ERC4626.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

// DEVNET ONLY: the yield-bearing token of the relay's non-custodial yield account
// (spec §4.6): OpenZeppelin's ERC-4626 over the devnet USDC whose share price rises.
//
// Inflation-attack mitigation, twice over:
//   1. `_decimalsOffset() = 6`: shares carry 6 more decimals than USDC (12), so OpenZeppelin's
//      virtual shares/assets make a first-depositor donation attack cost ~10^6 times what it
//      could steal;
//   2. the deployer seeds the vault with a first deposit (`relay up` deposits 10,000 USDC and
//      never withdraws it), so the share supply is never near zero.
//
// Yield: the owner funds a reward pool (`fundRewards`) that is released linearly at
// `rewardRate` base units per second; `totalAssets()` counts only the released part, so
// `convertToAssets(shares)` rises with block time and every holder earns pro rata. The APY a
// client sees is measured from the price history (`convertToAssets` at two blocks).
contract YieldVault is ERC4626 {
    using SafeERC20 for IERC20;

    error NotOwner(address caller);

    event RewardsFunded(uint256 amount, uint256 ratePerSecond, uint256 locked);

    address public immutable owner;
    /// Reward assets not yet released at `rewardUpdated`.
    uint256 public rewardLocked;
    /// Base units of the asset released per second.
    uint256 public rewardRate;
    /// When `rewardLocked` was last set.
    uint256 public rewardUpdated;

    constructor(IERC20 asset_, string memory name_, string memory symbol_)
        ERC20(name_, symbol_)
        ERC4626(asset_)
    {
        owner = msg.sender;
        rewardUpdated = block.timestamp;
    }

    /// Reward assets still locked now.
    function unreleased() public view returns (uint256) {
        uint256 released = (block.timestamp - rewardUpdated) * rewardRate;
        return released >= rewardLocked ? 0 : rewardLocked - released;
    }

    /// The vault's assets less the locked rewards.
    function totalAssets() public view override returns (uint256) {
        return IERC20(asset()).balanceOf(address(this)) - unreleased();
    }

    /// Adds `amount` (pulled from the owner) to the locked rewards and releases them, with
    /// what is still locked, at `ratePerSecond` from now on.
    function fundRewards(uint256 amount, uint256 ratePerSecond) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        uint256 locked = unreleased() + amount;
        rewardLocked = locked;
        rewardRate = ratePerSecond;
        rewardUpdated = block.timestamp;
        IERC20(asset()).safeTransferFrom(msg.sender, address(this), amount);
        emit RewardsFunded(amount, ratePerSecond, locked);
    }

    function _decimalsOffset() internal pure override returns (uint8) {
        return 6;
    }
}
